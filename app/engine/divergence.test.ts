import { describe, expect, it } from 'vitest';
import { klDivergence, logSoftmaxInto } from './divergence.js';

describe('KL(reference ‖ quantized)', () => {
  const logSoftmax = (row: number[]): Float64Array => {
    const out = new Float64Array(row.length);
    logSoftmaxInto(new Float32Array(row), out);
    return out;
  };

  it('is 0 for identical rows and invariant to a constant shift of the logits', () => {
    expect(klDivergence(logSoftmax([1, 2, 3]), logSoftmax([1, 2, 3]))).toBe(0);
    expect(klDivergence(logSoftmax([1, 2, 3]), logSoftmax([11, 12, 13]))).toBeCloseTo(0, 12);
  });

  it('matches the closed form for two-token distributions', () => {
    const p = [0.8, 0.2];
    const q = [0.5, 0.5];
    const expected = p[0]! * Math.log(p[0]! / q[0]!) + p[1]! * Math.log(p[1]! / q[1]!);
    expect(klDivergence(logSoftmax([Math.log(0.8), Math.log(0.2)]), logSoftmax([0, 0]))).toBeCloseTo(expected, 6);
  });

  it('is Infinity where the quantized lane gives no mass to a token the reference can emit', () => {
    expect(klDivergence(logSoftmax([0, 0]), logSoftmax([0, -Infinity]))).toBe(Infinity);
  });
});
