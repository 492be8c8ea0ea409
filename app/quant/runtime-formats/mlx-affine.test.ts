import { describe, expect, it } from 'vitest';
import { float16BitsToNumber, roundToFloat16 } from '../../tensor/float16.js';
import { MLX_FORMATS } from './mlx-affine.js';
import type { FormatGeometry, RuntimeFormat } from './types.js';
import { NO_TENSOR_PARAMS } from './types.js';

function format(name: string): RuntimeFormat {
  return MLX_FORMATS.find((f) => f.name === name)!;
}

function roundTrip(f: RuntimeFormat, x: Float32Array, g: FormatGeometry) {
  const rows = x.length / g.headDim;
  const bytes = new Uint8Array(rows * f.rowBytes(g));
  f.encodeRows(x, rows, g, NO_TENSOR_PARAMS, bytes);
  const back = new Float32Array(x.length);
  f.decodeRows(bytes, rows, g, NO_TENSOR_PARAMS, back);
  return { bytes, back };
}

describe('MLX affine quantization', () => {
  it('names bits 2, 3, 4, 6, 8 by groups 32, 64, 128', () => {
    expect(MLX_FORMATS.map((f) => f.name)).toContain('mlx:4bit-g64');
    expect(MLX_FORMATS).toHaveLength(15);
  });

  it('counts packed codes plus a scale and a bias per group in the model dtype', () => {
    const g: FormatGeometry = { headDim: 128, dtype: 'float16', side: 'key' };
    expect(format('mlx:4bit-g64').rowBytes(g)).toBe(64 + 2 * 2 * 2); // 4.5 bits/value
    expect(format('mlx:3bit-g32').rowBytes(g)).toBe(48 + 2 * 4 * 2);
    expect(format('mlx:8bit-g128').rowBytes({ ...g, dtype: 'float32' })).toBe(128 + 2 * 4);
  });

  it('refuses a head_dim the group does not divide, with mx.quantize\'s message', () => {
    expect(format('mlx:4bit-g64').refusal({ headDim: 80, dtype: 'float16', side: 'key' }))
      .toMatch(/^\[quantize\] The last dimension of the matrix needs to be divisible by the quantization group size 64\./);
    expect(format('mlx:4bit-g32').refusal({ headDim: 80, dtype: 'float16', side: 'key' })).toMatch(/group size 32/);
    expect(format('mlx:4bit-g32').refusal({ headDim: 96, dtype: 'float16', side: 'key' })).toBeNull();
  });

  it('0…31 at 4 bits: scale signed toward the larger edge, bias = that edge, codes reversed', () => {
    const g: FormatGeometry = { headDim: 32, dtype: 'float32', side: 'key' };
    const x = Float32Array.from({ length: 32 }, (_, i) => i);
    const { bytes, back } = roundTrip(format('mlx:4bit-g32'), x, g);
    const view = new DataView(bytes.buffer);
    // w_max = 31 wins (|0| is not > |31|): scale = −31/15, q0 = rint(31 / scale) = −15, scale = 31 / −15, bias = 31.
    const scale = Math.fround(31 / -15);
    expect(view.getFloat32(16, true)).toBe(scale);
    expect(view.getFloat32(20, true)).toBe(31);
    // codes: rint((w − 31) / scale); code k of each little-endian u32 at bit 4k.
    const word0 = view.getUint32(0, true);
    for (let k = 0; k < 8; k++) {
      const expected = Math.min(15, Math.max(0, Math.round(Math.fround(Math.fround(k - 31) / scale))));
      expect((word0 >>> (4 * k)) & 15, `code ${k}`).toBe(expected);
    }
    expect(back[31]).toBe(31);
    expect(back[0]).toBe(Math.fround(Math.fround(15 * scale) + 31));
  });

  it('rounds exact ties to even, as the CPU kernel\'s rint does', () => {
    // Group [-1.5 … 1.5] at 2 bits: |w_min| is not > |w_max|, scale −1, q0 = rint(1.5 / −1) = −2, scale = −0.75, bias = 1.5.
    const g: FormatGeometry = { headDim: 32, dtype: 'float32', side: 'key' };
    const x = new Float32Array(32);
    x[0] = -1.5;
    x[1] = 1.5;
    x[2] = 0.375; // (0.375 − 1.5) / −0.75 = 1.5 → 2 (even)
    x[3] = 1.125; // (1.125 − 1.5) / −0.75 = 0.5 → 0 (even)
    const { bytes } = roundTrip(format('mlx:2bit-g32'), x, g);
    const codes = [0, 1, 2, 3].map((k) => (bytes[0]! >>> (2 * k)) & 3);
    expect(codes).toEqual([3, 0, 2, 0]);
  });

  it('packs 3-bit codes eight to three bytes and 6-bit codes four to three bytes', () => {
    const g: FormatGeometry = { headDim: 32, dtype: 'float32', side: 'key' };
    // 0…7 · step with min 0: |0| > |7| is false, so scale is negative and the codes run 7 − i.
    const x = Float32Array.from({ length: 32 }, (_, i) => i % 8);
    const { bytes } = roundTrip(format('mlx:3bit-g32'), x, g);
    const pack = bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16);
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((k) => (pack >>> (3 * k)) & 7)).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    const six = roundTrip(format('mlx:6bit-g32'), Float32Array.from({ length: 32 }, (_, i) => i * 2), g).bytes;
    const sixPack = six[0]! | (six[1]! << 8) | (six[2]! << 16);
    expect([0, 1, 2, 3].map((k) => (sixPack >>> (6 * k)) & 63)).toEqual([63, 61, 59, 57]);
  });

  it('keeps scales and biases as float16 for a float16 model, and dequantizes in float16', () => {
    const g: FormatGeometry = { headDim: 64, dtype: 'float16', side: 'value' };
    const x = Float32Array.from({ length: 128 }, (_, i) => roundToFloat16(Math.cos(i) * 3));
    const f = format('mlx:4bit-g64');
    const { bytes, back } = roundTrip(f, x, g);
    const view = new DataView(bytes.buffer);
    for (let row = 0; row < 2; row++) {
      const scale = float16BitsToNumber(view.getUint16(row * 36 + 32, true));
      const bias = float16BitsToNumber(view.getUint16(row * 36 + 34, true));
      for (let i = 0; i < 64; i++) {
        const byte = bytes[row * 36 + (i >> 1)]!;
        const q = i & 1 ? byte >>> 4 : byte & 15;
        expect(back[row * 64 + i]).toBe(roundToFloat16(roundToFloat16(q * scale) + bias));
      }
    }
  });

  it('every bits/group round trip: the edge exact, the rest within half a stored step or the clipped far edge', () => {
    // MLX moves the scale so the larger-magnitude edge is exactly code 0 (scale = edge / q0), so the
    // step can shrink and the far edge be clipped at 2^bits − 1 codes: the error bound says both.
    const g: FormatGeometry = { headDim: 128, dtype: 'float32', side: 'key' };
    const x = Float32Array.from({ length: 512 }, (_, i) => Math.fround(Math.sin(i * 1.3) * (1 + (i % 5))));
    for (const f of MLX_FORMATS) {
      const { back, bytes } = roundTrip(f, x, g);
      const bits = Number(/(\d)bit/.exec(f.name)![1]);
      const group = Number(/g(\d+)/.exec(f.name)![1]);
      const view = new DataView(bytes.buffer);
      const perRow = f.rowBytes(g);
      for (let start = 0; start < x.length; start += group) {
        const row = Math.floor(start / 128);
        const inRow = (start % 128) / group;
        const scale = Math.abs(view.getFloat32(row * perRow + 16 * bits + 4 * inRow, true));
        const bias = view.getFloat32(row * perRow + 16 * bits + 4 * (128 / group) + 4 * inRow, true);
        const slice = x.subarray(start, start + group);
        const range = Math.max(...slice) - Math.min(...slice);
        const bound = Math.max(scale * 0.5, range - (2 ** bits - 1) * scale) * (1 + 1e-5) + 1e-6;
        expect(slice.includes(bias), `${f.name}: the bias is an edge of the group`).toBe(true);
        for (let i = 0; i < group; i++) {
          expect(Math.abs(back[start + i]! - slice[i]!), `${f.name} at ${start + i}`).toBeLessThanOrEqual(bound);
        }
      }
    }
  });
});
