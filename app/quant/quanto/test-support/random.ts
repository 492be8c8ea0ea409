/** Seeded generators for reproducible test tensors (mulberry32 + Box–Muller). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function normalTensor(count: number, seed: number, scale = 1): Float32Array {
  const random = seededRandom(seed);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const u = random() || 1e-12;
    out[i] = scale * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  }
  return out;
}
