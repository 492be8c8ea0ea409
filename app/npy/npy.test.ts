import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseNpy, serializeNpy } from './npy.js';
import { goldenPath, hasShared } from '../node/golden.js';
import { NpyFormatError } from '../errors.js';

describe('npy', () => {
  it('round-trips float32, float16 bits and uint8 with numpy-compatible headers', () => {
    const f32 = { dtype: 'float32' as const, shape: [2, 3], data: new Float32Array([1, -2, 3.5, 0, 1e-8, -7]) };
    const back = parseNpy(serializeNpy(f32));
    expect(back.dtype).toBe('float32');
    expect(back.shape).toEqual([2, 3]);
    expect(Array.from(back.data as Float32Array)).toEqual(Array.from(f32.data));

    const u8 = parseNpy(serializeNpy({ dtype: 'uint8', shape: [5], data: new Uint8Array([0, 1, 2, 254, 255]) }));
    expect(u8.shape).toEqual([5]);
    expect(Array.from(u8.data as Uint8Array)).toEqual([0, 1, 2, 254, 255]);

    const f16 = parseNpy(serializeNpy({ dtype: 'float16', shape: [1, 2], data: new Uint16Array([0x3c00, 0xc000]) }));
    expect(f16.dtype).toBe('float16');
    expect(Array.from(f16.data as Uint16Array)).toEqual([0x3c00, 0xc000]);
  });

  it('aligns the header to 64 bytes and ends it with a newline, as numpy.save does', () => {
    const bytes = serializeNpy({ dtype: 'float32', shape: [1, 4, 128, 64], data: new Float32Array(4 * 128 * 64) });
    const headerLength = bytes[8]! | (bytes[9]! << 8);
    expect((10 + headerLength) % 64).toBe(0);
    expect(bytes[10 + headerLength - 1]).toBe(0x0a);
  });

  it.skipIf(!hasShared())('reads the golden inputs byte-identically to numpy (re-serialized file equals the original)', () => {
    const original = readFileSync(goldenPath('inputs', 'kv_a.npy'));
    const parsed = parseNpy(original);
    expect(parsed.shape).toEqual([1, 4, 128, 64]);
    expect(Buffer.from(serializeNpy(parsed)).equals(original)).toBe(true);
  });

  it('refuses files that are not .npy, truncated, Fortran-ordered or of an unsupported dtype, saying why', () => {
    expect(() => parseNpy(new TextEncoder().encode('hello world'), 'x.npy')).toThrow(/x\.npy is not a NumPy \.npy file/);
    const good = serializeNpy({ dtype: 'float32', shape: [4], data: new Float32Array(4) });
    expect(() => parseNpy(good.subarray(0, good.length - 3), 'cut.npy')).toThrow(/truncated/);
    const text = new TextDecoder('latin1').decode(good);
    const fortran = new Uint8Array([...text.replace("'fortran_order': False", "'fortran_order': True ")].map((c) => c.charCodeAt(0)));
    expect(() => parseNpy(fortran)).toThrow(/Fortran order/);
    const complex = new Uint8Array([...text.replace("'<f4'", "'<c8'")].map((c) => c.charCodeAt(0)));
    expect(() => parseNpy(complex)).toThrow(NpyFormatError);
    expect(() => parseNpy(complex)).toThrow(/dtype '<c8'/);
  });
});
