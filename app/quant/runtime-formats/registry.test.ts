import { describe, expect, it } from 'vitest';
import { RUNTIME_FORMAT_NAMES, RUNTIME_FORMATS, runtimeFormat } from './registry.js';
import { bitsPerValue, bytesPerTokenPerLayer, RuntimeFormatError, type FormatGeometry } from './types.js';

const g128: FormatGeometry = { headDim: 128, dtype: 'float16', side: 'key' };

/** Bits per code: integer codes' width, a float's mantissa bits + 1. */
function codeBits(name: string): number {
  if (name === 'vllm:fp8_e4m3') return 4;
  if (name === 'vllm:fp8_e5m2') return 3;
  if (name === 'nvfp4') return 2;
  if (name.startsWith('ort-webgpu:q')) return Number(name.slice('ort-webgpu:q'.length));
  const mlx = /^mlx:(\d)bit/.exec(name);
  if (mlx !== null) return Number(mlx[1]);
  return Number(/q(\d)_|iq(\d)/.exec(name)!.slice(1).find((d) => d !== undefined));
}

describe('the runtime format registry', () => {
  it('names every format once, as the CLI spells them', () => {
    expect(new Set(RUNTIME_FORMAT_NAMES).size).toBe(RUNTIME_FORMAT_NAMES.length);
    for (const name of ['llama.cpp:q8_0', 'llama.cpp:q4_0', 'llama.cpp:q4_0+rot', 'llama.cpp:iq4_nl', 'vllm:fp8_e4m3',
      'vllm:fp8_e5m2', 'nvfp4', 'mlx:4bit-g64', 'mlx:3bit-g128', 'ort-webgpu:q8']) {
      expect(runtimeFormat(name).name).toBe(name);
    }
  });

  it('refuses an unknown name and lists the formats', () => {
    expect(() => runtimeFormat('llama.cpp:q3_k')).toThrow(RuntimeFormatError);
    expect(() => runtimeFormat('llama.cpp:q3_k')).toThrow(/unknown KV format "llama\.cpp:q3_k"\. Formats: llama\.cpp:q8_0, .*ort-webgpu:q8, ort-webgpu:q4\./);
  });

  it('counts bits per value as the runtimes do (head_dim 128, a float16 model)', () => {
    const bits = (name: string) => bitsPerValue(runtimeFormat(name), g128);
    expect(bits('llama.cpp:q8_0')).toBe(8.5);
    expect(bits('llama.cpp:q4_0')).toBe(4.5);
    expect(bits('llama.cpp:q4_1')).toBe(5);
    expect(bits('llama.cpp:q5_0')).toBe(5.5);
    expect(bits('llama.cpp:q5_1')).toBe(6);
    expect(bits('llama.cpp:iq4_nl')).toBe(4.5);
    expect(bits('llama.cpp:q4_0+rot')).toBe(4.5);
    expect(bits('vllm:fp8_e4m3')).toBe(8);
    expect(bits('nvfp4')).toBe(4.5);
    expect(bits('mlx:4bit-g64')).toBe(4.5);
    expect(bits('mlx:8bit-g32')).toBe(9);
    expect(bits('ort-webgpu:q8')).toBe(8.25);
    expect(bits('ort-webgpu:q4')).toBe(4.25);
  });

  it('counts bytes per token per layer for K and V formats chosen apart (Llama-3-8B: 8 KV heads × 128)', () => {
    const g = { headDim: 128, dtype: 'float16' as const };
    // llama.cpp q8_0 keys (136 B per head) and q4_0 values (72 B per head), as llama.cpp's -ctk/-ctv.
    expect(bytesPerTokenPerLayer(runtimeFormat('llama.cpp:q8_0'), runtimeFormat('llama.cpp:q4_0'), g, 8)).toBe(8 * (136 + 72));
    // vLLM fp8: one byte per value; the fp32 k_scale/v_scale are per layer.
    expect(bytesPerTokenPerLayer(runtimeFormat('vllm:fp8_e4m3'), runtimeFormat('vllm:fp8_e4m3'), g, 8)).toBe(2 * 8 * 128);
    expect(runtimeFormat('vllm:fp8_e4m3').tensorBytes).toBe(4);
    // NVFP4: 64 B of codes and 8 B of block scales per head.
    expect(bytesPerTokenPerLayer(runtimeFormat('nvfp4'), runtimeFormat('nvfp4'), g, 8)).toBe(2 * 8 * 72);
  });

  it('every format round-trips a Gaussian-like tensor at head_dim 128 with an error its bits allow', () => {
    const g: FormatGeometry = { headDim: 128, dtype: 'float32', side: 'value' };
    const rows = 16;
    const errors = new Map<string, number>();
    const x = Float32Array.from({ length: rows * 128 }, (_, i) => Math.fround(Math.sin(i * 12.9898) * 43758.5453 % 1 * 2));
    for (const format of RUNTIME_FORMATS) {
      expect(format.refusal(g), format.name).toBeNull();
      const params = format.tensorParams(x, g, false);
      const bytes = new Uint8Array(rows * format.rowBytes(g));
      format.encodeRows(x, rows, g, params, bytes);
      const back = new Float32Array(x.length);
      format.decodeRows(bytes, rows, g, params, back);
      let signal = 0;
      let noise = 0;
      for (let i = 0; i < x.length; i++) {
        signal += x[i]! ** 2;
        noise += (x[i]! - back[i]!) ** 2;
      }
      const rel = Math.sqrt(noise / signal);
      // A grid of b-bit codes (floats: mantissa bits + 1) over the data's range: under 2^(2 − b) relative.
      expect(rel, format.name).toBeLessThan(2 ** (2 - codeBits(format.name)));
      expect(rel, format.name).toBeGreaterThan(0);
      errors.set(format.name, rel);
    }
    // More bits, less error, within each family.
    for (const group of [32, 64, 128]) {
      const mlx = [2, 3, 4, 6, 8].map((b) => errors.get(`mlx:${b}bit-g${group}`)!);
      for (let i = 1; i < mlx.length; i++) expect(mlx[i]).toBeLessThan(mlx[i - 1]!);
    }
    const llama = ['q4_0', 'q5_0', 'q8_0'].map((t) => errors.get(`llama.cpp:${t}`)!);
    expect(llama[1]).toBeLessThan(llama[0]!);
    expect(llama[2]).toBeLessThan(llama[1]!);
    expect(errors.get('vllm:fp8_e4m3')).toBeLessThan(errors.get('vllm:fp8_e5m2')!);
  });
});
