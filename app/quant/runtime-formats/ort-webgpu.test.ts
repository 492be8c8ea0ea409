import { describe, expect, it } from 'vitest';
import { ORT_WEBGPU_Q8 } from './ort-webgpu.js';
import type { FormatGeometry } from './types.js';
import { NO_TENSOR_PARAMS } from './types.js';

const g8: FormatGeometry = { headDim: 8, dtype: 'float32', side: 'key' };

describe('ONNX Runtime WebGPU kvCacheQuantizationBits 8', () => {
  it('stores an fp32 scale word and head_dim int8 values: 4 + head_dim bytes', () => {
    expect(ORT_WEBGPU_Q8.rowBytes({ ...g8, headDim: 128 })).toBe(132);
  });

  it('refuses what ONNX Runtime GenAI refuses, in its words', () => {
    expect(ORT_WEBGPU_Q8.refusal({ ...g8, headDim: 96 })).toMatch(/^KV cache quantization requires head_size to be a power of 2 and >= 8, but got head_size=96\./);
    expect(ORT_WEBGPU_Q8.refusal({ ...g8, headDim: 4 })).not.toBeNull();
    expect(ORT_WEBGPU_Q8.refusal({ ...g8, headDim: 64 })).toBeNull();
  });

  it('scale = max|x| / 127, codes round(x / scale) with ties to even, clamped to ±127', () => {
    // amax 127 → scale 1, inverse 1: 2.5 → 2, 3.5 → 4, −2.5 → −2.
    const x = Float32Array.from([127, 2.5, 3.5, -2.5, -127, 0, 0.49, -100.5]);
    const bytes = new Uint8Array(12);
    ORT_WEBGPU_Q8.encodeRows(x, 1, g8, NO_TENSOR_PARAMS, bytes);
    expect(new DataView(bytes.buffer).getFloat32(0, true)).toBe(1);
    expect([...new Int8Array(bytes.buffer, 4, 8)]).toEqual([127, 2, 4, -2, -127, 0, 0, -100]);
    const back = new Float32Array(8);
    ORT_WEBGPU_Q8.decodeRows(bytes, 1, g8, NO_TENSOR_PARAMS, back);
    expect([...back]).toEqual([127, 2, 4, -2, -127, 0, 0, -100]);
  });

  it('a zero head vector keeps scale 0 and reads back zeros', () => {
    const bytes = new Uint8Array(12).fill(0xaa);
    ORT_WEBGPU_Q8.encodeRows(new Float32Array(8), 1, g8, NO_TENSOR_PARAMS, bytes);
    expect([...bytes]).toEqual(new Array(12).fill(0));
  });

  it('scales each head vector by its own maximum', () => {
    const x = Float32Array.from([0.5, -0.25, 0, 0, 0, 0, 0, 0.125, 10, 5, 0, 0, 0, 0, 0, -10]);
    const bytes = new Uint8Array(24);
    ORT_WEBGPU_Q8.encodeRows(x, 2, g8, NO_TENSOR_PARAMS, bytes);
    const view = new DataView(bytes.buffer);
    expect(view.getFloat32(0, true)).toBe(Math.fround(0.5 / 127));
    expect(view.getFloat32(12, true)).toBe(Math.fround(10 / 127));
    const back = new Float32Array(16);
    ORT_WEBGPU_Q8.decodeRows(bytes, 2, g8, NO_TENSOR_PARAMS, back);
    expect(back[0]).toBeCloseTo(0.5, 6);
    expect(back[15]).toBeCloseTo(-10, 5);
  });
});
