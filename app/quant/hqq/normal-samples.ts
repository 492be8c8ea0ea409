/**
 * Deterministic standard-normal float32 samples for tests and benchmarks (the golden inputs are
 * numpy `standard_normal` draws; any N(0, 1) data exercises HQQ the same way). xorshift32 feeds a
 * Box–Muller transform, so the same seed gives the same tensor on every machine.
 */
export function normalSamples(count: number, seed: number): Float32Array {
  let state = seed >>> 0 || 0x9e3779b9;
  const uniform = (): number => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return (state + 0.5) / 4294967296; // (0, 1): never 0, so log() stays finite
  };
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const radius = Math.sqrt(-2 * Math.log(uniform()));
    const angle = 2 * Math.PI * uniform();
    out[i] = radius * Math.cos(angle);
    if (i + 1 < count) out[i + 1] = radius * Math.sin(angle);
  }
  return out;
}
