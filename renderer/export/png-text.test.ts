import { describe, expect, it } from 'vitest';
import { crc32, readPngText, withPngText } from './png-text.js';

/** A 1×1 grey PNG (IHDR, IDAT, IEND), as a canvas would give. */
const PIXEL = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));

describe('PNG text chunks', () => {
  it('computes PNG\'s CRC-32 (the IEND chunk\'s is AE426082)', () => {
    expect(crc32(new TextEncoder().encode('IEND')).toString(16)).toBe('ae426082');
  });

  it('writes UTF-8 iTXt chunks after IHDR that read back, and leaves the image intact', () => {
    const png = withPngText(PIXEL, { Title: 'KV memory over steps — run 20260101-120000-abc123', Description: 'quanto 4-bit · group 32 · ‖x−x̂‖' });
    expect(readPngText(png)).toEqual({ Title: 'KV memory over steps — run 20260101-120000-abc123', Description: 'quanto 4-bit · group 32 · ‖x−x̂‖' });
    expect(Array.from(png.subarray(0, 33))).toEqual(Array.from(PIXEL.subarray(0, 33)));
    expect(Array.from(png.subarray(png.length - PIXEL.length + 33))).toEqual(Array.from(PIXEL.subarray(33)));
    // every chunk's CRC is right: walk them all
    for (let offset = 8; offset < png.length;) {
      const length = new DataView(png.buffer, png.byteOffset).getUint32(offset);
      const crc = new DataView(png.buffer, png.byteOffset).getUint32(offset + 8 + length);
      expect(crc32(png.subarray(offset + 4, offset + 8 + length))).toBe(crc);
      offset += 12 + length;
    }
  });

  it('refuses bytes that are not a PNG', () => {
    expect(() => withPngText(new Uint8Array([1, 2, 3]), { Title: 'x' })).toThrow(/not a PNG/);
  });
});
