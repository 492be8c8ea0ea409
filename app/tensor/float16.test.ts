import { describe, expect, it } from 'vitest';
import { float16BitsToNumber, numberToFloat16Bits, roundToFloat16 } from './float16.js';

/**
 * An independent binary16 rounding: the exponent from log2 (corrected next to powers of two), then
 * the magic-number integer rounding of x / ulp. Slow, shares no trick with roundToFloat16.
 */
function referenceRound(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  if (a >= 65520) return x > 0 ? Infinity : -Infinity;
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1;
  else if (2 ** (e + 1) <= a) e += 1;
  const ulp = 2 ** (Math.max(e, -14) - 10);
  const r = ((a / ulp + 6755399441055744) - 6755399441055744) * ulp;
  return x < 0 ? -r : r;
}

/** deterministic uniform [0, 1) (mulberry32) */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function expectSame(x: number): void {
  const actual = roundToFloat16(x);
  const expected = referenceRound(x);
  if (!(Object.is(actual, expected) || (Number.isNaN(actual) && Number.isNaN(expected)))) {
    throw new Error(`roundToFloat16(${x}) = ${actual}, expected ${expected}`);
  }
}

function halfOf(bits: number): number {
  return float16BitsToNumber(bits);
}

describe('float16', () => {
  it('converts every finite binary16 bit pattern to its value and back unchanged', () => {
    for (let h = 0; h < 0x10000; h++) {
      const exponent = (h >> 10) & 0x1f;
      if (exponent === 0x1f) continue; // inf and NaN below
      const v = float16BitsToNumber(h);
      expect(roundToFloat16(v)).toBe(v);
      const back = numberToFloat16Bits(v);
      if (back !== h) throw new Error(`bits 0x${h.toString(16)} -> ${v} -> 0x${back.toString(16)}`);
    }
  });

  it('rounds to nearest with ties to even, including subnormals and overflow', () => {
    expect(roundToFloat16(1 + 2 ** -11)).toBe(1); // tie between 1 and 1+2^-10: even mantissa wins
    expect(roundToFloat16(1 + 3 * 2 ** -11)).toBe(1 + 2 * 2 ** -10);
    expect(roundToFloat16(2 ** -25)).toBe(0); // half the smallest subnormal: ties to even (0)
    expect(roundToFloat16(3 * 2 ** -25)).toBe(2 ** -23);
    expect(roundToFloat16(3 * 2 ** -26)).toBe(2 ** -24);
    expect(roundToFloat16(65504)).toBe(65504);
    expect(roundToFloat16(65519.99)).toBe(65504);
    expect(roundToFloat16(65520)).toBe(Infinity);
    expect(roundToFloat16(-65520)).toBe(-Infinity);
    expect(roundToFloat16(-70000)).toBe(-Infinity);
    expect(roundToFloat16(1e300)).toBe(Infinity); // beyond float32 too
    expect(roundToFloat16(0.1)).toBe(0.0999755859375);
    expect(Object.is(roundToFloat16(-1e-30), -0)).toBe(true);
    expect(Object.is(roundToFloat16(-0), -0)).toBe(true);
    expect(Number.isNaN(roundToFloat16(Number.NaN))).toBe(true);
    expect(numberToFloat16Bits(NaN)).toBe(0x7e00);
    expect(numberToFloat16Bits(-Infinity)).toBe(0xfc00);
  });

  it('breaks a tie towards the double when the double is only a float32 ulp from the midpoint', () => {
    // the float32 nearest to these doubles is the midpoint itself; the double decides the side
    const above = 1 + 2 ** -11 + 2 ** -40;
    expect(Math.fround(above)).toBe(1 + 2 ** -11);
    expect(roundToFloat16(above)).toBe(1 + 2 ** -10);
    expect(roundToFloat16(1 + 3 * 2 ** -11 - 2 ** -40)).toBe(1 + 2 ** -10);
    expect(roundToFloat16(65520 - 2 ** -20)).toBe(65504); // not infinite
    expect(roundToFloat16(-(2 ** -14 + 2 ** -25 + 2 ** -50))).toBe(-(2 ** -14 + 2 ** -24));
    expect(roundToFloat16(2 ** -25 + 2 ** -60)).toBe(2 ** -24); // subnormal region: the double itself
  });

  it('equals the reference on every float32 of a dense sweep: all exponents, random and tie mantissas', () => {
    const f = new Float32Array(1);
    const u = new Uint32Array(f.buffer);
    const random = seeded(12);
    for (let exponent = 0; exponent < 256; exponent++) {
      for (let k = 0; k < 600; k++) {
        const high = Math.floor(random() * 1024) << 13;
        const low = k < 200 ? 0x1000 + (k % 3) - 1 : Math.floor(random() * 0x2000);
        for (const sign of [0, 0x80000000]) {
          u[0] = (sign | (exponent << 23) | high | low) >>> 0;
          expectSame(f[0]!);
        }
      }
    }
  });

  it('equals the reference on the results of +, −, × and ÷ of two half values', () => {
    const random = seeded(13);
    const ops = [(a: number, b: number) => a + b, (a: number, b: number) => a - b, (a: number, b: number) => a * b, (a: number, b: number) => a / b];
    for (let i = 0; i < 200_000; i++) {
      const a = halfOf(Math.floor(random() * 0x7c00) | (random() < 0.5 ? 0x8000 : 0));
      const b = halfOf(Math.floor(random() * 0x7c00) | (random() < 0.5 ? 0x8000 : 0));
      expectSame(ops[i % 4]!(a, b));
    }
  });

  it('equals the reference on any double: random magnitudes and doubles just around every kind of midpoint', () => {
    const random = seeded(14);
    for (let i = 0; i < 200_000; i++) {
      const x = (random() < 0.5 ? -1 : 1) * random() * 2 ** (Math.floor(random() * 64) - 40);
      expectSame(x);
    }
    for (let h = 0; h < 0x7bff; h += 7) {
      const lo = halfOf(h);
      const mid = (lo + halfOf(h + 1)) / 2;
      for (const d of [0, 2 ** -45, -(2 ** -45), 2 ** -30, -(2 ** -30)]) {
        expectSame(mid * (1 + d));
        expectSame(-mid * (1 + d));
      }
    }
  });
});
