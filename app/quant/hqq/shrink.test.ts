import { describe, expect, it } from 'vitest';
import { SHRINK_EXPONENT, SHRINK_WEIGHT, SHRINK_ZERO_BELOW, shrink, shrinkPow } from './shrink.js';

const fround = Math.fround;

/** hqq's shrink_lp_op with no threshold: |x| − 0.1·|x|^−0.3, clamped at 0, signed like x. */
function shrinkFormula(x: number): number {
  const magnitude = Math.abs(x);
  const out = Math.max(fround(magnitude - fround(SHRINK_WEIGHT * shrinkPow(magnitude))), 0);
  return x < 0 ? -out : out;
}

function float32s(from: number, to: number, count: number): number[] {
  const bits = new Uint32Array(2);
  new Float32Array(bits.buffer).set([from, to]);
  const out: number[] = [];
  const view = new Float32Array(1);
  const viewBits = new Uint32Array(view.buffer);
  for (let i = 0; i < count; i++) {
    viewBits[0] = bits[0]! + Math.floor(((bits[1]! - bits[0]!) * i) / count);
    out.push(view[0]!);
  }
  return out;
}

describe('HQQ shrinkage (shrink_lp_op, lp 0.7, beta 10)', () => {
  it('computes x^(−0.3) as a correctly rounded float32 on a wide sample', () => {
    let differ = 0;
    const sample = float32s(0.17, 5000, 200_000);
    for (const x of sample) if (shrinkPow(x) !== fround(Math.pow(x, SHRINK_EXPONENT))) differ++;
    expect(differ).toBe(0);
  });

  it('is exactly zero below its threshold, so skipping the power there changes nothing', () => {
    for (const x of [0, 1e-40, 1e-20, 1e-6, 0.01, 0.1, ...float32s(0.15, SHRINK_ZERO_BELOW, 20_000)]) {
      // `+ 0` folds −0 into 0: the sign of a zero shrinkage never reaches W − W_e
      expect(shrinkFormula(x) + 0).toBe(0);
      expect(shrinkFormula(-x) + 0).toBe(0);
      expect(shrink(x) + 0).toBe(0);
    }
    // the true threshold is 0.1^(1/1.3) ≈ 0.170125: just above it the shrinkage is positive
    expect(shrinkFormula(0.1702)).toBeGreaterThan(0);
    expect(SHRINK_ZERO_BELOW).toBeLessThan(Math.pow(0.1, 1 / 1.3));
  });

  it('matches the formula above the threshold, with the sign of x', () => {
    for (const x of float32s(SHRINK_ZERO_BELOW, 100, 20_000)) {
      expect(shrink(x) + 0).toBe(shrinkFormula(x) + 0);
      expect(shrink(-x) + 0).toBe(-shrinkFormula(x) + 0);
    }
    expect(shrink(1)).toBe(fround(1 - fround(SHRINK_WEIGHT * 1)));
  });
});
