import type { KvDtype, KvShape, KvTensor } from '../tensor/kv-tensor.js';

/**
 * The quantizer contract shared by both backends, the cache and the CLI.
 * Semantics: ../shared/reference/quantized-cache-spec.md §3 (quanto §3.1, HQQ §3.2).
 */
export type QuantBackend = 'quanto' | 'hqq';

export interface QuantParams {
  readonly nbits: number;
  /** quanto: 0 or -1; HQQ: 0 or 1 (the library's own meaning, see spec §3) */
  readonly axis: number;
  readonly groupSize: number;
}

/**
 * One quantized KV tensor, laid out exactly as the library stores it.
 *
 * Codes live in a 2-D "grouped" grid `[rows, cols]` (`gridShape`), the same layout as the golden
 * `codes.npy`. Packing runs along dim 0 of that grid (spec §3.1 step 4, §3.2 step 4).
 */
export interface QuantizedTensor {
  readonly backend: QuantBackend;
  readonly params: QuantParams;
  /** the original tensor's shape `[batch, kvHeads, seq, headDim]` and dtype (T) */
  readonly shape: KvShape;
  readonly dtype: KvDtype;
  /** `[rows, cols]` of the unpacked code grid */
  readonly gridShape: readonly [rows: number, cols: number];
  /** packed codes, library byte layout; `[ceil(rows / (8 / nbits)), cols]` bytes for 2/4/8 bits */
  readonly packed: Uint8Array;
  /** `[rows, cols]`-compatible 2-D shape of scale and zero, as in the golden files (`[groups, 1]` or `[1, groups]`) */
  readonly paramShape: readonly [number, number];
  /** per group, values exactly representable in `dtype` (quanto `_scale`; HQQ `meta["scale"]`) */
  readonly scale: Float32Array;
  /** per group (quanto `_shift` = -min, a float; HQQ `meta["zero"]`, in code units) */
  readonly zero: Float32Array;
}

export interface Quantizer {
  readonly backend: QuantBackend;
  /** Throws QuantizationError for shapes and parameters the library refuses. */
  quantize(x: KvTensor, params: QuantParams): QuantizedTensor;
  /** Returns a new tensor with `q.shape` and `q.dtype`. */
  dequantize(q: QuantizedTensor): KvTensor;
  /** Writes the dequantized values into `out` (length = element count) without allocating. */
  dequantizeInto(q: QuantizedTensor, out: Float32Array): void;
  /** The unpacked codes in the `gridShape` layout (uint8), as the golden `codes.npy`. */
  unpackCodes(q: QuantizedTensor): Uint8Array;
}

/** Bytes a quantized tensor occupies: packed codes plus its scale and zero in the storage dtype. */
export function quantizedByteSize(q: QuantizedTensor): number {
  const paramBytes = q.dtype === 'float16' ? 2 : 4;
  return q.packed.byteLength + (q.scale.length + q.zero.length) * paramBytes;
}
