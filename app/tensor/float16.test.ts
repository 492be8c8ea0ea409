import { describe, expect, it } from 'vitest';
import { float16BitsToNumber, numberToFloat16Bits, roundToFloat16 } from './float16.js';

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
    expect(roundToFloat16(65519.99)).toBe(65504);
    expect(roundToFloat16(65520)).toBe(Infinity);
    expect(roundToFloat16(-65520)).toBe(-Infinity);
    expect(roundToFloat16(0.1)).toBe(0.0999755859375);
    expect(numberToFloat16Bits(NaN)).toBe(0x7e00);
    expect(numberToFloat16Bits(-Infinity)).toBe(0xfc00);
  });
});
