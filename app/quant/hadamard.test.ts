import { describe, expect, it } from 'vitest';
import { roundToFloat16 } from '../tensor/float16.js';
import { describeHadamard, hadamardBlockSize, hadamardRotateRows, planHadamard, type HadamardPlan } from './hadamard.js';

function plan(headDim: number): HadamardPlan {
  const planned = planHadamard(headDim);
  if ('refused' in planned) throw new Error(planned.refused);
  return planned;
}

function values(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let state = seed;
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out[i] = (state / 2 ** 32 - 0.5) * 6;
  }
  return out;
}

/** H_n / √n by its definition: entry (i, j) = (−1)^popcount(i & j) / √n. */
function denseHadamard(input: Float32Array, block: number): Float64Array {
  const out = new Float64Array(input.length);
  for (let start = 0; start < input.length; start += block) {
    for (let i = 0; i < block; i++) {
      let sum = 0;
      for (let j = 0; j < block; j++) {
        let bits = i & j;
        let parity = 0;
        while (bits !== 0) { parity ^= bits & 1; bits >>>= 1; }
        sum += (parity === 0 ? 1 : -1) * input[start + j]!;
      }
      out[start + i] = sum / Math.sqrt(block);
    }
  }
  return out;
}

describe('the Hadamard rotation along head_dim', () => {
  it('picks one block for a power-of-two head_dim, the largest power-of-two divisor otherwise, and refuses odd ones', () => {
    expect(plan(64)).toEqual({ headDim: 64, block: 64, blocks: 1 });
    expect(plan(80)).toEqual({ headDim: 80, block: 16, blocks: 5 });
    expect(plan(96)).toEqual({ headDim: 96, block: 32, blocks: 3 });
    expect(describeHadamard(plan(80))).toBe('block-diagonal, 5 blocks of 16');
    expect(describeHadamard(plan(8))).toBe('one block of 8');
    expect(hadamardBlockSize(63)).toBe(1);
    expect(planHadamard(63)).toEqual({ refused: expect.stringMatching(/head_dim 63 is odd.*Drop --rotate/) });
  });

  it('is the orthonormal Sylvester matrix (checked against its definition), block by block', () => {
    for (const headDim of [2, 8, 64, 80]) {
      const p = plan(headDim);
      const x = values(3 * headDim, headDim);
      const rotated = new Float32Array(x.length);
      hadamardRotateRows(p, x, rotated, 3, 'float32');
      const expected = denseHadamard(x, p.block);
      for (let i = 0; i < x.length; i++) expect(rotated[i]).toBeCloseTo(expected[i]!, 5);
    }
  });

  it('round-trips (rotate, then rotate again = the inverse) within float32 rounding, and keeps the norm', () => {
    for (const headDim of [16, 64, 128, 80]) {
      const p = plan(headDim);
      const x = values(10 * headDim, 7 + headDim);
      const rotated = new Float32Array(x.length);
      hadamardRotateRows(p, x, rotated, 10, 'float32');
      const back = new Float32Array(x.length);
      hadamardRotateRows(p, rotated, back, 10, 'float32');
      let normX = 0;
      let normR = 0;
      for (let i = 0; i < x.length; i++) {
        // two float32 roundings of values below 3·√block: a few ulps of the largest magnitude
        expect(Math.abs(back[i]! - x[i]!)).toBeLessThanOrEqual(4 * 2 ** -23 * 3 * Math.sqrt(p.block));
        normX += x[i]! ** 2;
        normR += rotated[i]! ** 2;
      }
      expect(normR / normX).toBeCloseTo(1, 6);
      // it really moved the values: not the identity
      expect(rotated.some((value, i) => value !== x[i])).toBe(true);
    }
  });

  it('works in place, and rounds each result to binary16 for float16 tensors', () => {
    const p = plan(8);
    const x = values(16, 3);
    const copy = x.slice();
    const separate = new Float32Array(16);
    hadamardRotateRows(p, x, separate, 2, 'float16');
    hadamardRotateRows(p, copy, copy, 2, 'float16');
    expect(Array.from(copy)).toEqual(Array.from(separate));
    for (const value of separate) expect(roundToFloat16(value)).toBe(value);
  });
});
