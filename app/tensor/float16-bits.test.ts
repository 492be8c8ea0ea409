import { describe, expect, it } from 'vitest';
import { float16BitsToNumber, numberToFloat16Bits } from './float16.js';
import { float32ToHalfBitsInto, halfBitsToFloat32Into } from './float16-bits.js';

describe('fast binary16 conversion', () => {
  it('widens every one of the 65,536 bit patterns as the reference does', () => {
    const bits = new Uint16Array(65536).map((_, i) => i);
    const out = new Float32Array(65536);
    halfBitsToFloat32Into(bits, 0, out, 0, 65536);
    const mismatches: number[] = [];
    for (let h = 0; h < 65536; h++) {
      const expected = float16BitsToNumber(h);
      if (!(Object.is(out[h], expected) || (Number.isNaN(out[h]!) && Number.isNaN(expected)))) mismatches.push(h);
    }
    expect(mismatches).toEqual([]);
  });

  it('rounds float32 values to nearest even exactly as app/tensor/float16.ts, edge cases included', () => {
    const special = [0, -0, 1, -1, 65504, 65519.99, 65520, -65520, 1e9, -1e9, Infinity, -Infinity, NaN, 2 ** -14, 2 ** -24, 2 ** -25,
      3 * 2 ** -26, 2 ** -26, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 5.960464477539063e-8, 6.097555160522461e-5, 0.1, -0.33333334];
    let seed = 12345;
    const random = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 4294967296;
    };
    const values = new Float32Array([...special, ...Array.from({ length: 20000 }, () => (random() - 0.5) * 2 ** Math.floor(random() * 40 - 28))]);
    const out = new Uint16Array(values.length);
    float32ToHalfBitsInto(values, 0, out, 0, values.length);
    const mismatches = [...values].filter((value, i) => out[i] !== numberToFloat16Bits(value));
    expect(mismatches).toEqual([]);
  });

  it('converts a window at an offset', () => {
    const values = new Float32Array([9, 1.5, -2.25, 9]);
    const out = new Uint16Array(4);
    float32ToHalfBitsInto(values, 1, out, 2, 2);
    expect([...out]).toEqual([0, 0, numberToFloat16Bits(1.5), numberToFloat16Bits(-2.25)]);
  });
});
