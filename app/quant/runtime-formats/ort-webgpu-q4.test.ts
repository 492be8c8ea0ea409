import { describe, expect, it } from 'vitest';
import { ORT_WEBGPU_Q4, TQ_BOUNDARIES, TQ_CENTROIDS, turboQuantIndex, whtF32 } from './ort-webgpu-q4.js';
import { rotateRows } from './llama-cpp-rotation.js';
import type { FormatGeometry } from './types.js';
import { NO_TENSOR_PARAMS } from './types.js';

const g128: FormatGeometry = { headDim: 128, dtype: 'float32', side: 'key' };

describe('ONNX Runtime WebGPU kvCacheQuantizationBits 4 (TurboQuant)', () => {
  it('stores an fp32 norm and head_dim 4-bit indices: 4 + head_dim / 2 bytes, refused where GenAI refuses', () => {
    expect(ORT_WEBGPU_Q4.rowBytes(g128)).toBe(68);
    expect(ORT_WEBGPU_Q4.refusal({ ...g128, headDim: 96 })).toMatch(/power of 2 and >= 8, but got head_size=96/);
    expect(ORT_WEBGPU_Q4.refusal({ ...g128, headDim: 64 })).toBeNull();
  });

  it('snaps to the nearest of the 16 centroids: the boundaries are their midpoints, ties going up', () => {
    for (let i = 0; i < 15; i++) {
      expect(Math.abs(TQ_BOUNDARIES[i]! - (TQ_CENTROIDS[i]! + TQ_CENTROIDS[i + 1]!) / 2)).toBeLessThan(1e-4);
      expect(turboQuantIndex(TQ_BOUNDARIES[i]!)).toBe(i + 1);
      expect(turboQuantIndex(Math.fround(TQ_BOUNDARIES[i]! - 1e-6))).toBe(i);
    }
    for (let i = 0; i < 16; i++) expect(turboQuantIndex(TQ_CENTROIDS[i]!)).toBe(i);
    expect(turboQuantIndex(-1)).toBe(0);
    expect(turboQuantIndex(1)).toBe(15);
  });

  it('its f32 Walsh–Hadamard transform is the orthonormal Sylvester rotation (as llama.cpp\'s, to f32 rounding)', () => {
    const x = Float32Array.from({ length: 128 }, (_, i) => Math.fround(Math.sin(i * 0.9) * (1 + (i % 3))));
    const viaOrt = x.slice();
    whtF32(viaOrt, 0, 128);
    const viaLlama = x.slice();
    rotateRows(viaLlama, 1, 128, 128, new Float64Array(128));
    for (let i = 0; i < 128; i++) expect(Math.abs(viaOrt[i]! - viaLlama[i]!)).toBeLessThan(1e-5);
    whtF32(viaOrt, 0, 128);
    for (let i = 0; i < 128; i++) expect(Math.abs(viaOrt[i]! - x[i]!)).toBeLessThan(1e-5);
  });

  it('a one-hot head vector: every rotated coordinate 1/√128 of the norm → centroid 0.0829, rotated back', () => {
    const x = new Float32Array(128);
    x[0] = 2;
    const bytes = new Uint8Array(68);
    ORT_WEBGPU_Q4.encodeRows(x, 1, g128, NO_TENSOR_PARAMS, bytes);
    expect(new DataView(bytes.buffer).getFloat32(0, true)).toBeCloseTo(2, 6);
    expect([...bytes.subarray(4)].every((b) => b === 0xbb)).toBe(true); // index 11 in both nibbles
    const back = new Float32Array(128);
    ORT_WEBGPU_Q4.decodeRows(bytes, 1, g128, NO_TENSOR_PARAMS, back);
    expect(back[0]).toBeCloseTo(Math.fround(0.0829) * 2 * Math.sqrt(128), 5);
    for (let i = 1; i < 128; i++) expect(Math.abs(back[i]!)).toBeLessThan(1e-6);
  });

  it('a zero head vector stores norm 0 and reads back zeros', () => {
    const bytes = new Uint8Array(68);
    ORT_WEBGPU_Q4.encodeRows(new Float32Array(128), 1, g128, NO_TENSOR_PARAMS, bytes);
    expect(new DataView(bytes.buffer).getFloat32(0, true)).toBe(0);
    const back = new Float32Array(128).fill(7);
    ORT_WEBGPU_Q4.decodeRows(bytes, 1, g128, NO_TENSOR_PARAMS, back);
    expect(back.every((v) => v === 0)).toBe(true);
  });
});
