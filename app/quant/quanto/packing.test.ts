import { describe, expect, it } from 'vitest';
import { packedRowCount, packWeights, unpackWeights } from './packing.js';

describe('pack_weights / unpack (spec §3.1 step 4)', () => {
  it('puts the first block of rows in the low bits (4 bits: q[r] | q[r + R/2] << 4)', () => {
    const codes = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]); // [4 rows, 2 cols]
    expect(Array.from(packWeights(codes, 4, 2, 4))).toEqual([1 | (5 << 4), 2 | (6 << 4), 3 | (7 << 4), 4 | (8 << 4)]);
  });

  it('2 bits: rows r, r + R/4, r + R/2, r + 3R/4 from low to high bits', () => {
    const codes = Uint8Array.from([0, 1, 2, 3, 3, 2, 1, 0]); // [8 rows, 1 col]
    expect(Array.from(packWeights(codes, 8, 1, 2))).toEqual([0 | (2 << 2) | (3 << 4) | (1 << 6), 1 | (3 << 2) | (2 << 4) | (0 << 6)]);
  });

  it('uses ceil(R / k) packed rows; missing rows contribute nothing', () => {
    expect(packedRowCount(5, 4)).toBe(3);
    expect(packedRowCount(5, 2)).toBe(2);
    const codes = Uint8Array.from([1, 2, 3, 4, 5]); // [5 rows, 1 col] at 4 bits: rowDim 3
    expect(Array.from(packWeights(codes, 5, 1, 4))).toEqual([1 | (4 << 4), 2 | (5 << 4), 3]);
    const two = packWeights(codes.map((c) => c & 3), 5, 1, 2); // rowDim 2: rows 0,2,4 | 1,3
    expect(Array.from(two)).toEqual([1 | (3 << 2) | (1 << 4), 2 | (0 << 2)]);
  });

  it('round-trips any codes for both widths and ragged row counts', () => {
    for (const bits of [2, 4]) {
      for (const rows of [1, 2, 3, 7, 8, 33]) {
        const cols = 5;
        const codes = Uint8Array.from({ length: rows * cols }, (_, i) => (i * 7 + rows) % (1 << bits));
        const packed = packWeights(codes, rows, cols, bits);
        expect(packed.length).toBe(packedRowCount(rows, bits) * cols);
        expect(Array.from(unpackWeights(packed, rows, cols, bits))).toEqual(Array.from(codes));
      }
    }
  });
});
