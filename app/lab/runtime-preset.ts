import type { SweepValue } from './sweep-spec.js';

/**
 * The sweep preset `runtimes` (issue 27, point 4): what the serving runtimes would do to the model's
 * KV cache, next to transformers' own QuantizedCache at 4 bits, one point each, measured the same way
 * (KLD, same top p, ΔPPL against the one full-precision reference). The runtime formats are kvscope
 * extensions (app/quant/runtime-formats/registry.ts); transformers' points keep its defaults
 * (group 64, residual 128), so their bits per value include the full-precision residual they keep.
 */
export const RUNTIMES_PRESET_POINTS: readonly Readonly<Record<string, SweepValue>>[] = [
  { backend: 'quanto', nbits: 4 },
  { backend: 'hqq', nbits: 4 },
  { 'kv-format': 'llama.cpp:q8_0' },
  { 'kv-format': 'llama.cpp:q8_0+rot' },
  { 'kv-format': 'llama.cpp:q4_0' },
  { 'kv-format': 'llama.cpp:q4_0+rot' },
  { 'kv-format': 'vllm:fp8_e4m3' },
  { 'kv-format': 'vllm:fp8_e5m2' },
  { 'kv-format': 'nvfp4' },
  { 'kv-format': 'mlx:4bit-g64' },
  { 'kv-format': 'ort-webgpu:q8' },
  { 'kv-format': 'ort-webgpu:q4' },
];
