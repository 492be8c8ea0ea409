import { KvscopeError } from '../../errors.js';
import type { KvDtype } from '../../tensor/kv-tensor.js';

/**
 * The KV formats of serving runtimes (issue 27; a kvscope extension beside transformers' cache).
 * Each runtime quantizes a K or V head vector once, when it is written, into bytes of its own layout;
 * a format here turns `rows` head vectors of `headDim` float32 values into those bytes and back.
 * Pure and allocation-free per value: the caller owns every buffer.
 */

/** What a format needs to know about the tensor it stores. */
export interface FormatGeometry {
  /** values per head vector (the row quantized as one unit) */
  readonly headDim: number;
  /** the model's KV dtype: MLX keeps its scales and biases in it; float16 dequantizes to float16 values */
  readonly dtype: KvDtype;
  /** llama.cpp rotates keys and values with different Hadamard sizes */
  readonly side: 'key' | 'value';
}

/** A per-tensor parameter some runtimes keep beside the rows (vLLM's k_scale/v_scale, NVFP4's global scale). */
export interface TensorParams {
  /** fp32 per-tensor scale; 1 where the format has none */
  readonly tensorScale: number;
}

export interface RuntimeFormat {
  /** as the CLI spells it: `llama.cpp:q4_0`, `vllm:fp8_e4m3`, `nvfp4`, `mlx:4bit-g64`, `ort-webgpu:q8` */
  readonly name: string;
  /** the runtime(s) that store KV this way */
  readonly runtime: string;
  /** one line for --help and the docs */
  readonly description: string;
  /** the upstream file the maths follows */
  readonly source: string;
  /** the runtime's refusal for this geometry, in its words where it has them; null when it accepts */
  refusal(geometry: FormatGeometry): string | null;
  /** bytes one head vector takes in the runtime's layout */
  rowBytes(geometry: FormatGeometry): number;
  /** bytes per tensor beside the rows (fp32 per-tensor scales), as the runtime counts them */
  readonly tensorBytes: number;
  /**
   * Its per-tensor scale: none; 1.0 unless asked to compute it from the data (vLLM's
   * --calculate-kv-scales); or always computed from the data (NVFP4's calibrated global scale).
   */
  readonly tensorScale: 'none' | 'default-or-calculated' | 'calculated';
  /**
   * The per-tensor parameters for these values: the runtime's default, or with `calculate` the scale it
   * computes from the data (vLLM's --calculate-kv-scales); formats without one ignore it.
   */
  tensorParams(values: Float32Array, geometry: FormatGeometry, calculate: boolean): TensorParams;
  /** `values` [rows, headDim] → `out` [rows, rowBytes] */
  encodeRows(values: Float32Array, rows: number, geometry: FormatGeometry, params: TensorParams, out: Uint8Array): void;
  /** `bytes` [rows, rowBytes] → `out` [rows, headDim] */
  decodeRows(bytes: Uint8Array, rows: number, geometry: FormatGeometry, params: TensorParams, out: Float32Array): void;
}

/** A runtime refuses this tensor (its reason), or the format name is unknown. */
export class RuntimeFormatError extends KvscopeError {
  override readonly name = 'RuntimeFormatError';
}

/** No per-tensor parameter: what formats with only per-block scales return. */
export const NO_TENSOR_PARAMS: TensorParams = { tensorScale: 1 };

/** Bits per value as the runtime counts them: a row's bytes (per-tensor scales amortized away). */
export function bitsPerValue(format: RuntimeFormat, geometry: FormatGeometry): number {
  return (format.rowBytes(geometry) * 8) / geometry.headDim;
}

/**
 * Bytes one token adds to one layer's cache as the runtime counts them: every KV head's key row and
 * value row (K and V formats may differ). Per-tensor scales (`tensorBytes`) are per layer, not per token.
 */
export function bytesPerTokenPerLayer(keyFormat: RuntimeFormat, valueFormat: RuntimeFormat, geometry: Omit<FormatGeometry, 'side'>, kvHeads: number): number {
  return kvHeads * (keyFormat.rowBytes({ ...geometry, side: 'key' }) + valueFormat.rowBytes({ ...geometry, side: 'value' }));
}
