import { describe, expect, it } from 'vitest';
import { packCodes, packedByteLength, unpackCodes } from './bitpack.js';

function randomCodes(count: number, nbits: number, seed: number): Uint8Array {
  let state = seed;
  return Uint8Array.from({ length: count }, () => {
    state = (state * 1103515245 + 12345) >>> 0;
    return (state >>> 16) & ((1 << nbits) - 1);
  });
}

describe('HQQ bit packing (hqq BitPack, block-planar along rows)', () => {
  for (const [nbits, rows] of [[1, 16], [2, 8], [2, 12], [3, 7], [3, 10], [3, 23], [4, 6], [4, 64], [8, 5]] as const) {
    it(`round-trips ${nbits}-bit codes of ${rows} × 5`, () => {
      const codes = randomCodes(rows * 5, nbits, nbits * 100 + rows);
      const packed = packCodes(codes, rows, 5, nbits);
      expect(packed.length).toBe(packedByteLength(rows, 5, nbits));
      expect(Array.from(unpackCodes(packed, rows, 5, nbits))).toEqual(Array.from(codes));
    });
  }

  it('puts the first half of the rows in the high nibble at 4 bits (quanto does the opposite)', () => {
    // rows [0, 1] of one column: 0x3 and 0xA
    expect(Array.from(packCodes(Uint8Array.of(0x3, 0xa), 2, 1, 4))).toEqual([0x3a]);
  });

  it('packs 2 and 1 bits as <<6 <<4 <<2 <<0 and <<7 … <<0 planes', () => {
    expect(Array.from(packCodes(Uint8Array.of(3, 0, 1, 2), 4, 1, 2))).toEqual([0b11_00_01_10]);
    expect(Array.from(packCodes(Uint8Array.of(1, 0, 0, 1, 1, 0, 1, 1), 8, 1, 1))).toEqual([0b10011011]);
  });

  it('packs 3 bits into little-endian int32 words of 10 zero-padded rows, first row at bit 27', () => {
    // 3 rows pad to 10: step 1, rows 0..2 at shifts 27, 24, 21
    const packed = packCodes(Uint8Array.of(7, 1, 2), 3, 1, 3);
    const word = (7 << 27) | (1 << 24) | (2 << 21);
    expect(Array.from(packed)).toEqual([word & 0xff, (word >>> 8) & 0xff, (word >>> 16) & 0xff, word >>> 24]);
    // 12 rows pad to 20: step 2, so row 2 lands in word 0 at shift 24
    const codes = new Uint8Array(12);
    codes[2] = 5;
    const view = new DataView(packCodes(codes, 12, 1, 3).buffer);
    expect(view.getUint32(0, true)).toBe(5 << 24);
    expect(view.getUint32(4, true)).toBe(0);
  });

  it('returns the codes themselves at 8 bits and a copy when unpacking', () => {
    const codes = Uint8Array.of(1, 2, 3);
    expect(packCodes(codes, 3, 1, 8)).toBe(codes);
    const unpacked = unpackCodes(codes, 3, 1, 8);
    expect(unpacked).not.toBe(codes);
    expect(Array.from(unpacked)).toEqual([1, 2, 3]);
  });
});
