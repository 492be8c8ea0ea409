import { describe, expect, it } from 'vitest';
import { E2M1, E4M3, E5M2, encodeMinifloat, type MinifloatFormat } from './minifloat.js';

/**
 * Every code of each format decoded here from the specification's bit fields, independently of
 * minifloat.ts: OCP 8-bit floating point (OFP8) for e4m3/e5m2, OCP MX v1.0 §5.3.3 for e2m1.
 */
function specValue(code: number, exponentBits: number, mantissaBits: number, kind: 'e4m3' | 'e5m2' | 'e2m1'): number {
  const bias = 2 ** (exponentBits - 1) - 1;
  const signBit = code >> (exponentBits + mantissaBits);
  const biased = (code >> mantissaBits) & (2 ** exponentBits - 1);
  const fraction = code % 2 ** mantissaBits;
  const allOnes = biased === 2 ** exponentBits - 1;
  const sign = signBit === 1 ? -1 : 1;
  if (kind === 'e4m3' && allOnes && fraction === 2 ** mantissaBits - 1) return NaN;
  if (kind === 'e5m2' && allOnes) return fraction === 0 ? sign * Infinity : NaN;
  if (biased === 0) return sign * 2 ** (1 - bias) * (fraction / 2 ** mantissaBits);
  return sign * 2 ** (biased - bias) * (1 + fraction / 2 ** mantissaBits);
}

const FORMATS: [MinifloatFormat, number, number, 'e4m3' | 'e5m2' | 'e2m1', number][] = [
  [E4M3, 4, 3, 'e4m3', 448],
  [E5M2, 5, 2, 'e5m2', 57344],
  [E2M1, 2, 1, 'e2m1', 6],
];

describe.each(FORMATS)('%s', (format, e, m, kind, max) => {
  const codes = 2 ** (1 + e + m);
  const signBit = codes / 2;

  it(`decodes all ${codes} codes as the specification's bit fields say`, () => {
    expect(format.values.length).toBe(codes);
    for (let code = 0; code < codes; code++) {
      const expected = specValue(code, e, m, kind);
      const actual = format.values[code]!;
      if (Number.isNaN(expected)) expect(actual, `code ${code}`).toBeNaN();
      else expect(Object.is(actual, expected), `code ${code}: ${actual} vs ${expected}`).toBe(true);
    }
  });

  it('has the landmarks of the format: zero, −0, smallest subnormal, largest finite', () => {
    expect(format.values[0]).toBe(0);
    expect(Object.is(format.values[signBit], -0)).toBe(true);
    expect(format.values[1]).toBe(2 ** (2 - 2 ** (e - 1) - m));
    expect(format.values[format.maxCode]).toBe(max);
    expect(format.values[signBit | format.maxCode]).toBe(-max);
  });

  it('encodes every finite value to its own code (−0 to the negative zero)', () => {
    for (let code = 0; code < codes; code++) {
      const v = format.values[code]!;
      if (!Number.isFinite(v)) continue;
      expect(encodeMinifloat(format, v), `value ${v}`).toBe(code);
    }
  });

  it('rounds every midpoint between neighbouring codes to the even code, and just off it to the nearer', () => {
    for (const sign of [0, signBit]) {
      for (let code = 0; code < format.maxCode; code++) {
        const low = format.values[sign | code]!;
        const high = format.values[sign | (code + 1)]!;
        const mid = (low + high) / 2;
        const even = (code & 1) === 0 ? code : code + 1;
        expect(encodeMinifloat(format, mid), `midpoint ${mid}`).toBe(sign | even);
        const nudge = Math.abs(high - low) * 2 ** -20;
        const towardHigh = mid + (high > low ? nudge : -nudge);
        const towardLow = mid - (high > low ? nudge : -nudge);
        expect(encodeMinifloat(format, towardHigh)).toBe(sign | (code + 1));
        expect(encodeMinifloat(format, towardLow)).toBe(sign | code);
      }
    }
  });

  it('saturates at the largest finite value (infinities too) and keeps NaN a NaN', () => {
    for (const big of [max, max * 1.0001, max * 1.5, max * 1e6, Infinity]) {
      expect(encodeMinifloat(format, big)).toBe(format.maxCode);
      expect(encodeMinifloat(format, -big)).toBe(signBit | format.maxCode);
    }
    if (format.nanCode !== null) {
      expect(encodeMinifloat(format, NaN)).toBe(format.nanCode);
      expect(format.values[format.nanCode]).toBeNaN();
    }
  });

  it('rounds values below half the smallest subnormal to zero and half of it to zero (even)', () => {
    const tiny = format.values[1]!;
    expect(encodeMinifloat(format, tiny / 2)).toBe(0);
    expect(encodeMinifloat(format, -tiny / 2)).toBe(signBit);
    expect(encodeMinifloat(format, tiny * 0.75)).toBe(1);
    expect(encodeMinifloat(format, 1e-30)).toBe(0);
  });
});

describe('FP8 table facts as vLLM users know them', () => {
  it('e4m3 has 126 positive finite codes up to 448, one NaN per sign, no infinity', () => {
    expect([...E4M3.values].filter((v) => v > 0 && Number.isFinite(v)).length).toBe(126);
    expect([...E4M3.values].filter((v) => Number.isNaN(v)).length).toBe(2);
    expect([...E4M3.values].some((v) => !Number.isFinite(v) && !Number.isNaN(v))).toBe(false);
    expect(E4M3.values[0x08]).toBe(2 ** -6); // smallest normal
    expect(E4M3.values[0x01]).toBe(2 ** -9); // smallest subnormal
  });

  it('e5m2 has infinities at 0x7C/0xFC and six NaNs', () => {
    expect(E5M2.values[0x7c]).toBe(Infinity);
    expect(E5M2.values[0xfc]).toBe(-Infinity);
    expect([...E5M2.values].filter((v) => Number.isNaN(v)).length).toBe(6);
    expect(E5M2.values[0x01]).toBe(2 ** -16);
  });

  it('e2m1 holds 0, 0.5, 1, 1.5, 2, 3, 4, 6', () => {
    expect([...E2M1.values.subarray(0, 8)]).toEqual([0, 0.5, 1, 1.5, 2, 3, 4, 6]);
  });
});
