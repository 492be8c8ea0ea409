import { describe, expect, it } from 'vitest';
import { E2M1, E4M3, encodeMinifloat } from './minifloat.js';
import { NVFP4, nvfp4TensorScale } from './nvfp4.js';
import type { FormatGeometry } from './types.js';

const g16: FormatGeometry = { headDim: 16, dtype: 'float32', side: 'key' };

function encode(x: number[], tensorScale: number, g: FormatGeometry = g16) {
  const values = Float32Array.from(x);
  const rows = values.length / g.headDim;
  const bytes = new Uint8Array(rows * NVFP4.rowBytes(g));
  NVFP4.encodeRows(values, rows, g, { tensorScale }, bytes);
  const back = new Float32Array(values.length);
  NVFP4.decodeRows(bytes, rows, g, { tensorScale }, back);
  return { bytes, back };
}

describe('NVFP4', () => {
  it('counts 9/16 byte per value (4.5 bits) and one fp32 per tensor, as TensorRT-LLM does', () => {
    expect(NVFP4.rowBytes({ ...g16, headDim: 128 })).toBe(72);
    expect(NVFP4.tensorBytes).toBe(4);
    expect(NVFP4.refusal({ ...g16, headDim: 24 })).toMatch(/blocks of 16 .*head_dim 24 is not a multiple of 16/);
    expect(NVFP4.refusal({ ...g16, headDim: 80 })).toBeNull();
  });

  it('the per-tensor scale is amax / (448 · 6)', () => {
    expect(nvfp4TensorScale(Float32Array.from([1, -2688, 3]))).toBe(1);
    expect(nvfp4TensorScale(Float32Array.from([0.5, -12]))).toBe(Math.fround(12 / 2688));
  });

  it('a block whose max is 6 under a unit tensor scale stores its e2m1 codes directly, low nibble first', () => {
    const x = [6, -3, 0.5, 1.5, 2, -4, 0, 1, -6, 3, 4, -0.5, 1, 1, 2, 0];
    const { bytes, back } = encode(x, 1);
    expect(bytes[8]).toBe(encodeMinifloat(E4M3, 1)); // block scale 6 / 6 = 1
    for (let i = 0; i < 16; i++) {
      const code = i & 1 ? bytes[i >> 1]! >>> 4 : bytes[i >> 1]! & 15;
      expect(code, `value ${i}`).toBe(encodeMinifloat(E2M1, x[i]!));
    }
    expect([...back]).toEqual(x.map((v) => (Object.is(v, 0) ? 0 : v)));
  });

  it('rounds each scaled value to e2m1 with ties to even, the block scale to e4m3', () => {
    // max 6 → scale 1; 2.5 lies between 2 (code 4) and 3 (code 5): the even code, 2. 5 → 4 (code 6, even).
    const x = [6, 2.5, 5, 0.25, 0.75, 1.25, 1.75, 3.5, 0, 0, 0, 0, 0, 0, 0, 0];
    const { back } = encode(x, 1);
    expect([...back.subarray(0, 8)]).toEqual([6, 2, 4, 0, 1, 1, 2, 4]);
    // A block max of 7: scale 7/6 rounds to e4m3 1.125 (step 0.125 near 1), so 7 · (1 / 1.125) = 6.22… → 6 → 6.75.
    const y = [7, ...Array(15).fill(0)];
    const { bytes, back: yBack } = encode(y, 1);
    expect(E4M3.values[bytes[8]!]).toBe(1.125);
    expect(yBack[0]).toBe(6.75);
  });

  it('reads back e2m1 · e4m3 · tensor scale for a realistic row, within half a step of each value', () => {
    const g: FormatGeometry = { ...g16, headDim: 128 };
    const x = Array.from({ length: 256 }, (_, i) => Math.sin(i * 0.7) * (1 + (i % 17)));
    const scale = nvfp4TensorScale(Float32Array.from(x));
    const { bytes, back } = encode(x, scale, g);
    for (let i = 0; i < 256; i++) {
      const row = Math.floor(i / 128);
      const blockScale = E4M3.values[bytes[row * 72 + 64 + Math.floor((i % 128) / 16)]!]! * scale;
      // e2m1's largest step is 2 (between 4 and 6): the error is at most one step · block scale.
      expect(Math.abs(back[i]! - Math.fround(x[i]!))).toBeLessThanOrEqual(blockScale * 1.0001 + 1e-12);
    }
  });
});
