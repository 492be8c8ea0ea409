import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { layerMapFormats } from '../cache/cache-extensions.js';

/**
 * The runtime KV formats a quantized run stores (a kvscope extension, issue 27), as History and the
 * run's result name them: `llama.cpp:q4_0`, `K vllm:fp8_e4m3 · V nvfp4`, or the layer map's formats
 * beside transformers' backend in the other layers; null for transformers' cache alone.
 */
export function kvFormatText(quantization: QuantizedCacheSettings): string | null {
  const { kvFormatKey: key, kvFormatValue: value } = quantization.extensions ?? {};
  if (key !== undefined && value !== undefined) return key === value ? key : `K ${key} · V ${value}`;
  const mapped = layerMapFormats(quantization.extensions);
  return mapped.length === 0 ? null : `${mapped.join(', ')} in the layer map's layers (the others ${String(quantization.backend)} ${quantization.nbits}-bit)`;
}
