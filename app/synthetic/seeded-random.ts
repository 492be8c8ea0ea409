/**
 * A seeded PRNG whose output is the same on every JavaScript engine: xoshiro128** (Blackman & Vigna)
 * seeded through splitmix32, using only 32-bit integer ops (`Math.imul`, shifts). Weights drawn from
 * it go through exactly-rounded float ops only (no `Math.log`/`Math.cos`, whose last bit may differ
 * between engines), so the synthetic model's bytes, and its content hash, are the same everywhere.
 */
export class SeededRandom {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** `stream` names an independent sequence: each tensor draws from its own, so adding or
   * reordering tensors never changes the others. */
  constructor(seed: number, stream = '') {
    let state = (seed ^ fnv1a(stream)) >>> 0;
    const next = (): number => {
      // splitmix32: spreads a 32-bit seed over xoshiro's 128-bit state (never all zero)
      state = (state + 0x9e3779b9) >>> 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
  }

  /** A uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in the open interval (0, 1). */
  nextUnit(): number {
    return (this.nextUint32() + 0.5) / 4294967296;
  }

  /** A uniform integer in [0, bound). */
  nextInt(bound: number): number {
    return Math.floor(this.nextUnit() * bound);
  }

  /**
   * Fills `target` with values uniform in (-bound, bound): standard deviation bound/√3. A uniform
   * rather than a Gaussian keeps the draw engine-independent; what the KV cache sees is a sum over
   * 512 inputs, Gaussian either way.
   */
  fillUniform(target: Float32Array, bound: number): Float32Array {
    const scale = (2 * bound) / 4294967296;
    for (let i = 0; i < target.length; i++) {
      target[i] = (this.nextUint32() + 0.5) * scale - bound;
    }
    return target;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** FNV-1a over UTF-16 code units: a stable 32-bit hash of a stream name. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  }
  return hash >>> 0;
}
