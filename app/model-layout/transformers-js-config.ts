import { isConfigObject, type ConfigObject } from '../config/config-object.js';

/**
 * config.json's `transformers.js_config` (written by transformers.js' conversion scripts and the
 * onnx-community exports): which dtype to load by default, the KV cache dtype of each variant, and
 * which graphs keep their weights in external data files (`true`, or the number of `.onnx_data`
 * chunks: `model.onnx_data`, `model.onnx_data_1`, …).
 */
export interface TransformersJsConfig {
  /** `dtype`: the variant transformers.js loads when none is asked for */
  readonly dtype: string | null;
  /** `kv_cache_dtype`: one dtype for every variant, or per variant (`{"q4f16": "float16", "fp16": "float16"}`) */
  readonly kvCacheDtype: string | Readonly<Record<string, string>> | null;
  /** `use_external_data_format`: per graph file name (`model_q4.onnx`), or one value for all */
  readonly useExternalDataFormat: boolean | number | Readonly<Record<string, boolean | number>> | null;
}

export function readTransformersJsConfig(config: ConfigObject | null): TransformersJsConfig | null {
  const value = config?.['transformers.js_config'];
  if (!isConfigObject(value)) return null;
  const dtype = value['dtype'];
  return {
    dtype: typeof dtype === 'string' ? dtype : null,
    kvCacheDtype: stringOrMap(value['kv_cache_dtype']),
    useExternalDataFormat: externalFormat(value['use_external_data_format']),
  };
}

/** The KV dtype transformers.js expects for a variant (`float16`, `float32`), or null when the config says none. */
export function expectedKvDtype(config: TransformersJsConfig, dtype: string | null): string | null {
  const kv = config.kvCacheDtype;
  if (kv === null) return null;
  if (typeof kv === 'string') return kv;
  return kv[dtype ?? 'fp32'] ?? null;
}

/** How many external data chunks transformers.js expects beside `fileName` (0: none, or unsaid). */
export function expectedExternalChunks(config: TransformersJsConfig, fileName: string): number {
  const format = config.useExternalDataFormat;
  const value = format === null || typeof format !== 'object' ? format : format[fileName] ?? null;
  if (value === true) return 1;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : 0;
}

/** transformers.js' chunk names: `model.onnx_data`, then `model.onnx_data_1`, `model.onnx_data_2`, … */
export function externalChunkName(fileName: string, index: number): string {
  return index === 0 ? `${fileName}_data` : `${fileName}_data_${index}`;
}

function stringOrMap(value: unknown): string | Record<string, string> | null {
  if (typeof value === 'string') return value;
  if (!isConfigObject(value)) return null;
  const map: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) if (typeof item === 'string') map[key] = item;
  return map;
}

function externalFormat(value: unknown): boolean | number | Record<string, boolean | number> | null {
  if (typeof value === 'boolean' || typeof value === 'number') return value;
  if (!isConfigObject(value)) return null;
  const map: Record<string, boolean | number> = {};
  for (const [key, item] of Object.entries(value)) if (typeof item === 'boolean' || typeof item === 'number') map[key] = item;
  return map;
}
