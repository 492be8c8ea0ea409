import { describe, expect, it } from 'vitest';
import { roundToFloat16 } from '../../tensor/float16.js';
import { E4M3, E5M2, encodeMinifloat } from './minifloat.js';
import { calculatedKvScale, VLLM_FP8_E4M3, VLLM_FP8_E5M2 } from './vllm-fp8.js';
import type { FormatGeometry } from './types.js';

const key: FormatGeometry = { headDim: 8, dtype: 'float32', side: 'key' };

function roundTrip(format: typeof VLLM_FP8_E4M3, x: number[], scale: number, g: FormatGeometry = key) {
  const values = Float32Array.from(x);
  const bytes = new Uint8Array(values.length);
  format.encodeRows(values, values.length / g.headDim, g, { tensorScale: scale }, bytes);
  const back = new Float32Array(values.length);
  format.decodeRows(bytes, values.length / g.headDim, g, { tensorScale: scale }, back);
  return { bytes, back };
}

describe('vLLM FP8 KV cache', () => {
  it('stores one byte per value and counts one fp32 scale per tensor', () => {
    expect(VLLM_FP8_E4M3.rowBytes(key)).toBe(8);
    expect(VLLM_FP8_E4M3.tensorBytes).toBe(4);
    expect(VLLM_FP8_E4M3.refusal({ ...key, headDim: 80 })).toBeNull();
  });

  it('with the default scale 1.0 writes the fp8 code of each value and reads its table value', () => {
    const x = [0, 1, -1.0625, 0.0078125, 300, 500, -1e9, 3.3];
    const { bytes, back } = roundTrip(VLLM_FP8_E4M3, x, 1);
    expect([...bytes]).toEqual(x.map((v) => encodeMinifloat(E4M3, Math.fround(v))));
    expect(bytes[5]).toBe(0x7e); // 500 saturates to 448
    expect(back[5]).toBe(448);
    expect(back[6]).toBe(-448);
    expect(back[4]).toBe(288); // 300 → 288 (the e4m3 step at 256..448 is 32)
    expect(VLLM_FP8_E4M3.tensorParams(Float32Array.from(x), key, false).tensorScale).toBe(1);
  });

  it('divides by the scale before converting and multiplies after, in float32', () => {
    const x = [896, -0.5, 3, 0, 0, 0, 0, 0];
    const { bytes, back } = roundTrip(VLLM_FP8_E4M3, x, 2);
    expect(bytes[0]).toBe(0x7e); // 896 / 2 = 448
    expect(back[0]).toBe(896);
    expect(back[1]).toBe(-0.5);
    expect(bytes[2]).toBe(encodeMinifloat(E4M3, 1.5));
  });

  it('e5m2 saturates at 57344 and keeps NaN a NaN', () => {
    const { bytes, back } = roundTrip(VLLM_FP8_E5M2, [1e6, -Infinity, NaN, 1, 0.1, 0, 0, 0], 1);
    expect(bytes[0]).toBe(0x7b);
    expect(bytes[1]).toBe(0xfb);
    expect(bytes[2]).toBe(0x7f);
    expect(back[0]).toBe(57344);
    expect(back[2]).toBeNaN();
    expect(back[4]).toBe(E5M2.values[encodeMinifloat(E5M2, Math.fround(0.1))]);
  });

  it('--calculate-kv-scales: amax / 200 for keys, amax / 100 for values, in the model dtype', () => {
    const x = Float32Array.from([0.5, -3.3, 2, 0]);
    expect(calculatedKvScale(x, 'key', 'float32')).toBe(Math.fround(3.299999952316284 / 200));
    expect(calculatedKvScale(x, 'value', 'float32')).toBe(Math.fround(3.299999952316284 / 100));
    expect(calculatedKvScale(x, 'key', 'float16')).toBe(roundToFloat16(3.299999952316284 / 200));
    expect(VLLM_FP8_E4M3.tensorParams(x, { ...key, side: 'value' }, true).tensorScale).toBe(Math.fround(3.299999952316284 / 100));
  });

  it('a float16 model reads back float_to_half(value · scale)', () => {
    const g: FormatGeometry = { ...key, dtype: 'float16' };
    const scale = Math.fround(0.0123);
    const { back, bytes } = roundTrip(VLLM_FP8_E4M3, [1, 2, 3, 4, 5, 6, 7, 8].map((v) => v * 0.01), scale, g);
    for (let i = 0; i < 8; i++) expect(back[i]).toBe(roundToFloat16(Math.fround(E4M3.values[bytes[i]!]! * scale)));
  });
});
