import { CacheError } from '../errors.js';
import type { FormatGeometry, RuntimeFormat, TensorParams } from '../quant/runtime-formats/types.js';
import { bytesPerElement, type KvTensor } from '../tensor/kv-tensor.js';
import type { CacheLayer, KvPair } from './cache-layer.js';
import { checkUpdate, geometryOf, slabCount, type KvGeometry, type KvPairGeometry } from './kv-geometry.js';
import { EMPTY_LAYER_MEMORY, type LayerMemory } from './layer-memory.js';
import type { QuantizeEvent } from './quantize-event.js';
import { SeqBuffer } from './seq-buffer.js';

const NO_EVENTS: readonly QuantizeEvent[] = Object.freeze([]);

/**
 * One side's store: the runtime's bytes, token-major as llama.cpp's cache tensor keeps them
 * (`[tokens, slabs, rowBytes]`: token t, slab s at `(t·slabs + s)·rowBytes`), so an append only
 * writes at the end. vLLM, MLX and TensorRT-LLM order their pages otherwise; the bytes per row are the same.
 */
interface FormatStore {
  /** null: the cache plan keeps this side in full precision (a kvscope extension; the other side has a format) */
  readonly format: RuntimeFormat | null;
  readonly geometry: KvGeometry;
  readonly formatGeometry: FormatGeometry;
  /** 0 for a full-precision side */
  readonly rowBytes: number;
  /** fixed at the first update (see tensorParamsFor); null for a full-precision side */
  readonly params: TensorParams | null;
  /** [capacity tokens, slabs, rowBytes]; the first `tokens·slabs·rowBytes` bytes are live */
  bytes: Uint8Array;
  /** deq(bytes), `[batch, kvHeads, seq, headDim]`: what attention reads (see the class comment) */
  readonly dequantized: SeqBuffer;
}

/**
 * A serving runtime's write-once KV cache (issue 27; a kvscope extension, never the default): each
 * new K and V row is quantized with the runtime's format as it is stored, kept as the format's own
 * bytes, and dequantized for attention. Unlike transformers' QuantizedLayer there is no full-precision
 * residual and no flush: a row, once written, never changes (llama.cpp's `ggml_set_rows` into a
 * quantized cache, vLLM's `reshape_and_cache_flash` with an fp8 cache, mlx-lm's QuantizedKVCache).
 *
 * What attention reads: transformers' host path dequantizes the whole quantized store on every
 * update (`QuantizedLayer.update` calls `_dequantize` each step) and kvscope's QuantizedLayer keeps
 * that deq(store) between flushes as a JavaScript working buffer. Here a row never changes, so its
 * dequantization never does either: each row is dequantized once, when written, and appended to a
 * float view. The values are the same as dequantizing the whole store each step; the float view is
 * counted as working memory (`workingBytes`), and the stored bytes stay the format's (`codeBytes`,
 * as the runtime counts them).
 *
 * Per-tensor scales (vLLM's k_scale/v_scale, NVFP4's global scale) are fixed at the first update:
 * vLLM's default 1.0 for `default-or-calculated` formats, or with `calculateKvScales` the scale its
 * --calculate-kv-scales computes on the first forward pass (the prefill's rows); for `calculated`
 * ones (NVFP4) the scale computed from the prefill's rows. Later rows reuse it, as the runtimes do.
 */
export class WriteOnceLayer implements CacheLayer {
  readonly kind = 'write-once';
  readonly #keyFormat: RuntimeFormat | null;
  readonly #valueFormat: RuntimeFormat | null;
  #geometry: KvPairGeometry | null = null;
  #key: FormatStore | null = null;
  #value: FormatStore | null = null;
  #tokens = 0;
  /** [slabs, n, headDim] scratch for the new rows' dequantized values, reused across updates */
  #scratch = new Float32Array(0);
  #disposed = false;

  readonly #calculateKvScales: boolean;
  readonly #keepDequantized: boolean;

  /**
   * A null format keeps that side's rows in full precision, as the cache plan says for a layer map's
   * `full` side (its bytes count as full precision, not as the format's); one side must have a format.
   * `calculateKvScales`: vLLM's --calculate-kv-scales, for `default-or-calculated` formats.
   * `keepDequantized: false` keeps the bytes only (the graph path dequantizes them itself,
   * app/engine/graph-format-layer.ts): rows are written with `append`, and `update` is refused.
   */
  constructor(
    keyFormat: RuntimeFormat | null, valueFormat: RuntimeFormat | null,
    options: { readonly calculateKvScales?: boolean; readonly keepDequantized?: boolean } = {},
  ) {
    if (keyFormat === null && valueFormat === null) throw new CacheError('a write-once layer needs a runtime format for keys or values; a layer with neither is a dynamic one.');
    this.#keyFormat = keyFormat;
    this.#valueFormat = valueFormat;
    this.#calculateKvScales = options.calculateKvScales === true;
    this.#keepDequantized = options.keepDequantized !== false;
  }

  get events(): readonly QuantizeEvent[] {
    return NO_EVENTS;
  }

  get flushCount(): number {
    return 0;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** The formats of keys and values, for records and the preflight. */
  get formats(): { readonly key: RuntimeFormat | null; readonly value: RuntimeFormat | null } {
    return { key: this.#keyFormat, value: this.#valueFormat };
  }

  /** The stored bytes of one side, `[tokens, slabs, rowBytes]` (a view, valid until the next update); null before the first. */
  storedBytes(part: 'key' | 'value'): Uint8Array | null {
    const store = part === 'key' ? this.#key : this.#value;
    return store === null ? null : store.bytes.subarray(0, this.#tokens * slabCount(store.geometry) * store.rowBytes);
  }

  /** One side's stored bytes as the runtime counts them (memory() sums both): its rows, and its per-tensor scale. */
  sideMemory(part: 'key' | 'value'): { readonly codeBytes: number; readonly metadataBytes: number } {
    const store = part === 'key' ? this.#key : this.#value;
    if (store === null) return { codeBytes: 0, metadataBytes: 0 };
    return { codeBytes: slabCount(store.geometry) * this.#tokens * store.rowBytes, metadataBytes: store.format?.tensorBytes ?? 0 };
  }

  /** The per-tensor parameters a side uses; null before the first update. */
  tensorParams(part: 'key' | 'value'): TensorParams | null {
    return (part === 'key' ? this.#key : this.#value)?.params ?? null;
  }

  /** The concatenation a graph offers (KvConcatenation) holds the new rows in full precision, so it is never adopted. */
  update(key: KvTensor, value: KvTensor): KvPair {
    if (!this.#keepDequantized) throw new CacheError('This WriteOnceLayer keeps bytes only (the graph path); write rows with append().');
    this.append(key, value);
    return { key: this.#key!.dequantized.tensor(), value: this.#value!.dequantized.tensor() };
  }

  /** Encodes the new rows into the stores (and, unless bytes only, their dequantized views). */
  append(key: KvTensor, value: KvTensor): void {
    if (this.#disposed) throw new CacheError('This WriteOnceLayer was disposed; create a new cache to generate again.');
    const n = checkUpdate(key, value, this.#geometry);
    if (this.#geometry === null) this.#initialize(key, value);
    const keyStore = this.#key!;
    const valueStore = this.#value!;
    this.#write(keyStore, key.data, n);
    this.#write(valueStore, value.data, n);
    this.#tokens += n;
  }

  seqLength(): number {
    return this.#tokens;
  }

  /**
   * Stored bytes as the runtime counts them: every row's bytes (codes and block scales) in
   * `codeBytes`, the per-tensor fp32 scales (`tensorBytes`, once per layer and side) in
   * `metadataBytes`. The dequantized float views are kvscope's working memory.
   */
  memory(): LayerMemory {
    const key = this.#key;
    const value = this.#value;
    if (key === null || value === null) return EMPTY_LAYER_MEMORY;
    const tokens = this.#tokens;
    const slabs = slabCount(key.geometry);
    const valueCount = slabs * tokens * (key.geometry.headDim + value.geometry.headDim);
    const codeBytes = slabs * tokens * (key.rowBytes + value.rowBytes);
    const metadataBytes = (key.format?.tensorBytes ?? 0) + (value.format?.tensorBytes ?? 0);
    // A full-precision side (null format) holds its rows in T.
    const exactWidth = (key.format === null ? key.geometry.headDim : 0) + (value.format === null ? value.geometry.headDim : 0);
    const fullPrecisionBytes = slabs * tokens * exactWidth * bytesPerElement(key.geometry.dtype);
    return {
      tokens, quantizedTokens: tokens, fullPrecisionTokens: 0, valueCount, codeBytes, metadataBytes, fullPrecisionBytes,
      totalBytes: codeBytes + metadataBytes + fullPrecisionBytes, fp16BaselineBytes: valueCount * 2, fp32BaselineBytes: valueCount * 4,
      workingBytes: key.bytes.byteLength + value.bytes.byteLength + key.dequantized.capacityBytes + value.dequantized.capacityBytes + this.#scratch.byteLength,
    };
  }

  references(buffer: ArrayBufferLike): boolean {
    return [this.#key, this.#value].some((store) => store !== null && (store.dequantized.references(buffer) || store.bytes.buffer === buffer));
  }

  dispose(): void {
    for (const store of [this.#key, this.#value]) store?.dequantized.dispose();
    this.#key = null;
    this.#value = null;
    this.#scratch = new Float32Array(0);
    this.#disposed = true;
  }

  #initialize(key: KvTensor, value: KvTensor): void {
    this.#geometry = { key: geometryOf(key), value: geometryOf(value) };
    this.#key = newStore(this.#keyFormat, this.#geometry.key, 'key', key.data, this.#calculateKvScales);
    this.#value = newStore(this.#valueFormat, this.#geometry.value, 'value', value.data, this.#calculateKvScales);
  }

  /** Encodes `values` `[slabs, n, headDim]` at the end of the store, then decodes those bytes once into the float view. */
  #write(store: FormatStore, values: Float32Array, n: number): void {
    const { format, formatGeometry, rowBytes, params } = store;
    if (format === null || params === null) {
      store.dequantized.append(values, n);
      return;
    }
    const slabs = slabCount(store.geometry);
    const headDim = store.geometry.headDim;
    const start = this.#tokens * slabs * rowBytes;
    const needed = start + n * slabs * rowBytes;
    if (needed > store.bytes.length) {
      // Amortized doubling, as SeqBuffer grows; token-major, so the live bytes keep their offsets.
      const grown = new Uint8Array(Math.max(needed, 2 * store.bytes.length));
      grown.set(store.bytes.subarray(0, start));
      store.bytes = grown;
    }
    if (!this.#keepDequantized) {
      for (let s = 0; s < slabs; s++) {
        for (let t = 0; t < n; t++) {
          const row = (s * n + t) * headDim;
          const at = start + (t * slabs + s) * rowBytes;
          format.encodeRows(values.subarray(row, row + headDim), 1, formatGeometry, params, store.bytes.subarray(at, at + rowBytes));
        }
      }
      return;
    }
    const count = slabs * n * headDim;
    if (this.#scratch.length < count) this.#scratch = new Float32Array(Math.max(count, 2 * this.#scratch.length));
    const scratch = this.#scratch.subarray(0, count);
    for (let s = 0; s < slabs; s++) {
      for (let t = 0; t < n; t++) {
        const row = (s * n + t) * headDim;
        const at = start + (t * slabs + s) * rowBytes;
        const bytes = store.bytes.subarray(at, at + rowBytes);
        format.encodeRows(values.subarray(row, row + headDim), 1, formatGeometry, params, bytes);
        format.decodeRows(bytes, 1, formatGeometry, params, scratch.subarray(row, row + headDim));
      }
    }
    store.dequantized.append(scratch, n);
  }
}

function newStore(format: RuntimeFormat | null, geometry: KvGeometry, side: 'key' | 'value', firstValues: Float32Array, calculateKvScales: boolean): FormatStore {
  const formatGeometry: FormatGeometry = { headDim: geometry.headDim, dtype: geometry.dtype, side };
  if (format === null) return { format, geometry, formatGeometry, rowBytes: 0, params: null, bytes: new Uint8Array(0), dequantized: new SeqBuffer(geometry) };
  const refusal = format.refusal(formatGeometry);
  if (refusal !== null) throw new CacheError(`${refusal} (kvscope --kv-format-${side} ${format.name}: pick a format this head_dim allows).`);
  return {
    format, geometry, formatGeometry,
    rowBytes: format.rowBytes(formatGeometry),
    params: format.tensorParams(firstValues, formatGeometry, format.tensorScale === 'calculated' || (calculateKvScales && format.tensorScale === 'default-or-calculated')),
    bytes: new Uint8Array(0),
    dequantized: new SeqBuffer(geometry),
  };
}
