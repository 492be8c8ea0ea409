/**
 * A seeded PRNG for reproducible sampling: sfc32 (Chris Doty-Humphrey's Small Fast Counting RNG),
 * its 128-bit state filled from the seed by splitmix32. The same seed gives the same stream on every
 * platform (integer arithmetic only).
 */
export interface Prng {
  /** uniform in [0, 1) with 32 random bits */
  next(): number;
}

export function createPrng(seed: number): Prng {
  // Seeds beyond 2^32 keep their high bits: both halves feed the state.
  const low = seed >>> 0;
  const high = Math.floor(Math.abs(seed) / 4294967296) >>> 0;
  let s = low ^ Math.imul(high, 0x9e3779b9);
  const splitmix = (): number => {
    s = (s + 0x9e3779b9) | 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix();
  let b = splitmix();
  let c = splitmix();
  let d = splitmix();
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next(); // warm-up, as sfc32's author recommends
  return { next };
}
