import { describe, expect, it } from 'vitest';
import { roundToFloat16 } from '../../tensor/float16.js';
import { roundToHalf } from './half-rounding.js';
import { halfValue } from './test-support/half-table.js';
import { seededRandom } from './test-support/random.js';

describe('roundToHalf (the float16 path\'s fast rounding)', () => {
  it('equals roundToFloat16 on every float32 of a dense sweep: all exponents, random and tie mantissas', () => {
    const f = new Float32Array(1);
    const u = new Uint32Array(f.buffer);
    const random = seededRandom(12);
    let checked = 0;
    for (let exponent = 0; exponent < 256; exponent++) {
      for (let k = 0; k < 600; k++) {
        // every tie pattern (low 13 bits = 0x1000) and its neighbours, plus random mantissas
        const high = Math.floor(random() * 1024) << 13;
        const low = k < 200 ? 0x1000 + (k % 3) - 1 : Math.floor(random() * 0x2000);
        for (const sign of [0, 0x80000000]) {
          u[0] = (sign | (exponent << 23) | high | low) >>> 0;
          const v = f[0]!;
          const expected = roundToFloat16(v);
          const actual = roundToHalf(v);
          if (!(Object.is(actual, expected) || (Number.isNaN(actual) && Number.isNaN(expected)))) {
            throw new Error(`roundToHalf(${v}) = ${actual}, expected ${expected} (bits 0x${u[0]!.toString(16)})`);
          }
          checked++;
        }
      }
    }
    expect(checked).toBe(256 * 600 * 2);
  });

  it('equals roundToFloat16 on the double results of +, −, × and ÷ of two half values', () => {
    const random = seededRandom(13);
    const ops = [(a: number, b: number) => a + b, (a: number, b: number) => a - b, (a: number, b: number) => a * b, (a: number, b: number) => a / b];
    for (let i = 0; i < 200000; i++) {
      const a = halfValue(Math.floor(random() * 0xfc00) % 0x7c00 | (random() < 0.5 ? 0x8000 : 0));
      const b = halfValue(Math.floor(random() * 0x7c00) | (random() < 0.5 ? 0x8000 : 0));
      const v = ops[i % 4]!(a, b);
      const expected = roundToFloat16(v);
      const actual = roundToHalf(v);
      if (!(Object.is(actual, expected) || (Number.isNaN(actual) && Number.isNaN(expected)))) {
        throw new Error(`op ${i % 4} of ${a}, ${b}: roundToHalf = ${actual}, roundToFloat16 = ${expected}`);
      }
    }
    // the edges named in the spec of binary16
    expect(roundToHalf(65504)).toBe(65504);
    expect(roundToHalf(65519.99)).toBe(65504);
    expect(roundToHalf(65520)).toBe(Infinity);
    expect(roundToHalf(-70000)).toBe(-Infinity);
    expect(roundToHalf(2 ** -24)).toBe(2 ** -24);
    expect(roundToHalf(2 ** -25)).toBe(0);
    expect(roundToHalf(3 * 2 ** -26)).toBe(2 ** -24);
    expect(Object.is(roundToHalf(-1e-30), -0)).toBe(true);
    expect(roundToHalf(1 + 2 ** -11)).toBe(1); // tie: even mantissa
    expect(roundToHalf(1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9);
    expect(Number.isNaN(roundToHalf(Number.NaN))).toBe(true);
  });
});
