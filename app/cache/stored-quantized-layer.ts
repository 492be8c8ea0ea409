import { CacheError } from '../errors.js';
import { errorStats, type ErrorStats } from '../quant/error-stats.js';
import type { QuantParams, QuantizedTensor, Quantizer } from '../quant/types.js';
import { float32ToHalfBitsInto, halfBitsToFloat32Into } from '../tensor/float16-bits.js';
import { kvTensor, type KvTensor } from '../tensor/kv-tensor.js';
import type { CacheLayer, KvPair } from './cache-layer.js';
import { FlushScratch } from './flush-scratch.js';
import { shouldFlush } from './flush-schedule.js';
import { checkUpdate, shapeWithSeq, slabCount, type KvGeometry, type KvPairGeometry } from './kv-geometry.js';
import { EMPTY_LAYER_MEMORY, layerMemory, type LayerMemory } from './layer-memory.js';
import type { QuantizeEvent } from './quantize-event.js';
import { ResidualRows } from './residual-rows.js';
import type { KvRows, StoredKvPart } from './stored-parts.js';

/** Keys and values quantize with their own parameters (transformers: shared nbits and group, own axes). */
export interface StoredLayerSettings {
  readonly key: QuantParams;
  readonly value: QuantParams;
  readonly residualLength: number;
  /**
   * Never quantize: every row stays in the residual, so the graph attends to the exact history (the
   * reference replay on the rewritten graph: one session, one copy of the weights). Not a cache
   * transformers has; kvscope uses it only for the full-precision reference.
   */
  readonly keepFullPrecision?: boolean;
}

/** One of the two sides: what transformers stores, and nothing else. */
interface Side {
  readonly params: QuantParams;
  readonly geometry: KvGeometry;
  readonly residual: ResidualRows;
  store: QuantizedTensor | null;
  storeTokens: number;
}

/**
 * transformers' `QuantizedLayer` (spec §1.1, §1.3) holding only what transformers holds: per side the
 * quantized store and the full-precision residual in T (spec §3.6). Its state machine is
 * `QuantizedLayer`'s, decision for decision (the same `shouldFlush`, the same quantize calls on the same
 * tensors, so the same stores and events bit for bit; a test drives both side by side), but it never
 * keeps `dequant(store)`: a reader that needs the history computes it from `stored()`, as the rewritten
 * graph does on the in-graph path (app/onnx/rewrite/). Only a flush materializes one layer's history,
 * in the cache-wide FlushScratch, to quantize it again.
 *
 * `append` is the state change alone (what the in-graph lane calls with the graph's new rows);
 * `update` is `CacheLayer.update`, which also materializes and returns what transformers returns
 * (fresh arrays: for tests and for callers that want it, not for the decode loop).
 */
export class StoredQuantizedLayer implements CacheLayer {
  readonly kind = 'quantized';
  readonly #quantizer: Quantizer;
  readonly #settings: StoredLayerSettings;
  readonly #scratch: FlushScratch;
  readonly #ownsScratch: boolean;
  #sides: { key: Side; value: Side } | null = null;
  #cumulativeLength = 0;
  #updates = 0;
  #residualIs4d = false;
  #storeVersion = 0;
  readonly #events: QuantizeEvent[] = [];
  #flushCount = 0;
  #failure: Error | null = null;
  #disposed = false;

  readonly #releaseStore: ((store: QuantizedTensor) => void) | null;

  /**
   * `scratch`: the cache's shared flush memory (one per cache); a layer of its own gets a private one.
   * `releaseStore`: called with each store once it is replaced or the layer disposed, so a host can
   * free its arrays at once, as torch frees a tensor nothing refers to (else they wait for a garbage
   * collection, and a flush of every layer holds two stores of each for a while).
   */
  constructor(quantizer: Quantizer, settings: StoredLayerSettings, scratch?: FlushScratch, releaseStore?: (store: QuantizedTensor) => void) {
    if (!Number.isInteger(settings.residualLength)) {
      throw new CacheError(`residual length must be an integer number of tokens, got ${settings.residualLength}.`);
    }
    this.#quantizer = quantizer;
    this.#settings = settings;
    this.#scratch = scratch ?? new FlushScratch();
    this.#ownsScratch = scratch === undefined;
    this.#releaseStore = releaseStore ?? null;
  }

  get events(): readonly QuantizeEvent[] {
    return this.#events;
  }

  get flushCount(): number {
    return this.#flushCount;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  seqLength(): number {
    return this.#cumulativeLength;
  }

  /** What this layer stores for keys or values, read-only (StoredKvPart); empty before the prefill. */
  stored(part: 'key' | 'value'): StoredKvPart {
    const side = this.#sides?.[part];
    if (side === undefined) {
      return { store: null, storeTokens: 0, residual: new Float32Array(0), residualTokens: 0, storeVersion: this.#storeVersion };
    }
    return { store: side.store, storeTokens: side.storeTokens, residual: side.residual.view(), residualTokens: side.residual.tokens, storeVersion: this.#storeVersion };
  }

  /**
   * The §1.3 update without materializing its result: the prefill quantizes `key`/`value`; later
   * rows join the residual, or a flush re-quantizes `dequant(store) ++ residual ++ rows`.
   */
  append(key: KvRows, value: KvRows): void {
    this.#assertUsable();
    const n = checkRows(key, value, this.#sides === null ? null : { key: this.#sides.key.geometry, value: this.#sides.value.geometry });
    this.#cumulativeLength += n; // §1.3: always the first action
    const step = this.#updates++;
    try {
      if (this.#sides === null) this.#prefill(key, value, step);
      else this.#decode(this.#sides, key, value, step);
    } catch (error) {
      this.#failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    }
  }

  /** `CacheLayer.update`: `append`, then what transformers returns (the inputs at the prefill; else the history), as new arrays. */
  update(key: KvTensor, value: KvTensor): KvPair {
    const keyRows = rowsOf(key);
    const valueRows = rowsOf(value);
    const sides = this.#sides;
    if (sides === null || this.#disposed || this.#failure !== null) {
      this.append(keyRows, valueRows);
      return { key, value };
    }
    checkRows(keyRows, valueRows, { key: sides.key.geometry, value: sides.value.geometry });
    // `K = cat(dequant(Q), residual, k)` as it is before a flush replaces Q: what transformers returns either way.
    const returned = { key: this.#history(sides.key, keyRows, 'fresh'), value: this.#history(sides.value, valueRows, 'fresh') };
    this.append(keyRows, valueRows);
    return returned;
  }

  memory(): LayerMemory {
    const sides = this.#sides;
    if (sides === null) return EMPTY_LAYER_MEMORY;
    const stores = [sides.key.store, sides.value.store].filter((s): s is QuantizedTensor => s !== null);
    return layerMemory({
      geometry: { key: sides.key.geometry, value: sides.value.geometry },
      quantizedTokens: sides.key.storeTokens,
      fullPrecisionTokens: sides.key.residual.tokens,
      stores,
      workingBytes: sides.key.residual.capacityBytes + sides.value.residual.capacityBytes + (this.#ownsScratch ? this.#scratch.capacityBytes : 0),
    });
  }

  /** Nothing handed in is kept: new rows are copied into the residual or quantized. */
  references(_buffer: ArrayBufferLike): boolean {
    return false;
  }

  dispose(): void {
    for (const side of this.#sides === null ? [] : [this.#sides.key, this.#sides.value]) {
      side.residual.dispose();
      if (side.store !== null) this.#releaseStore?.(side.store);
      side.store = null;
    }
    this.#sides = null;
    if (this.#ownsScratch) this.#scratch.dispose();
    this.#disposed = true;
  }

  #prefill(key: KvRows, value: KvRows, step: number): void {
    const side = (rows: KvRows, params: QuantParams): Side => {
      const geometry: KvGeometry = { batch: rows.shape[0], kvHeads: rows.shape[1], headDim: rows.shape[3], dtype: rows.dtype };
      return { params, geometry, residual: new ResidualRows(rows.dtype, slabCount(geometry), geometry.headDim), store: null, storeTokens: 0 };
    };
    const sides = { key: side(key, this.#settings.key), value: side(value, this.#settings.value) };
    this.#sides = sides;
    if (this.#settings.keepFullPrecision === true) {
      sides.key.residual.append(key.data, key.shape[2]);
      sides.value.residual.append(value.data, value.shape[2]);
      this.#residualIs4d = true;
      return;
    }
    this.#residualIs4d = false;
    // Keys quantize (and may throw) before values, as transformers' update does.
    const keyError = this.#quantize(sides.key, this.#asFloat32(key));
    const valueError = this.#quantize(sides.value, this.#asFloat32(value));
    this.#storeVersion++;
    this.#events.push({ step, kind: 'prefill', tokens: key.shape[2], key: keyError, value: valueError });
  }

  #decode(sides: { key: Side; value: Side }, key: KvRows, value: KvRows, step: number): void {
    if (this.#settings.keepFullPrecision !== true && shouldFlush(this.#residualIs4d, sides.key.residual.tokens, this.#settings.residualLength)) {
      const keyError = this.#flushSide(sides.key, key);
      const valueError = this.#flushSide(sides.value, value);
      this.#residualIs4d = false;
      this.#flushCount++;
      this.#storeVersion++;
      this.#events.push({ step, kind: 'flush', tokens: sides.key.storeTokens, key: keyError, value: valueError });
      return;
    }
    sides.key.residual.append(key.data, key.shape[2]);
    sides.value.residual.append(value.data, value.shape[2]);
    this.#residualIs4d = true;
  }

  /** `quantize(cat(dequant(store), residual, rows))` (spec §3.5), in the shared scratch: one layer at a time. */
  #flushSide(side: Side, rows: KvRows): ErrorStats {
    const history = this.#history(side, rows, 'scratch');
    const error = this.#quantize(side, history);
    side.residual.clear();
    return error;
  }

  /**
   * `[dequant(store) | residual | rows]` as a float32 KvTensor (values of T), laid out slab by slab,
   * in the shared scratch (a flush) or in a fresh array (update's return value).
   */
  #history(side: Side, rows: KvRows, into: 'scratch' | 'fresh'): KvTensor {
    const { geometry } = side;
    const width = geometry.headDim;
    const slabs = slabCount(geometry);
    const stored = side.storeTokens;
    const residual = side.residual.tokens;
    const added = rows.shape[2];
    const seq = stored + residual + added;
    const out = into === 'fresh' ? new Float32Array(slabs * seq * width) : this.#scratch.history(slabs * seq * width);
    const store = side.store!;
    // dequant(store) lands slab-contiguous in the first slabs·stored·width values; move each slab up to its place.
    this.#quantizer.dequantizeInto(store, out.subarray(0, slabs * stored * width));
    for (let s = slabs - 1; s > 0; s--) out.copyWithin(s * seq * width, s * stored * width, (s + 1) * stored * width);
    side.residual.copyInto(out, seq * width, stored * width);
    const slab = added * width;
    for (let s = 0; s < slabs; s++) {
      const at = s * seq * width + (stored + residual) * width;
      if (rows.data instanceof Float32Array) out.set(rows.data.subarray(s * slab, (s + 1) * slab), at);
      else halfBitsToFloat32Into(rows.data, s * slab, out, at, slab);
    }
    return kvTensor(shapeWithSeq(geometry, seq), geometry.dtype, out);
  }

  /** `_quantize(contiguous(x), axis)`; the error of x against dequant(new store), as QuantizedHistory measures it. */
  #quantize(side: Side, x: KvTensor): ErrorStats {
    const store = this.#quantizer.quantize(x, side.params);
    const check = this.#scratch.check(x.data.length);
    this.#quantizer.dequantizeInto(store, check);
    const replaced = side.store;
    side.store = store;
    side.storeTokens = x.shape[2];
    if (replaced !== null) this.#releaseStore?.(replaced);
    return errorStats(x.data, check);
  }

  /** Rows as the float32 KvTensor the quantizer takes: float32 as they are, binary16 bits decoded (into the scratch). */
  #asFloat32(rows: KvRows): KvTensor {
    if (rows.data instanceof Float32Array) return kvTensor(rows.shape, rows.dtype, rows.data);
    const out = this.#scratch.history(rows.data.length);
    halfBitsToFloat32Into(rows.data, 0, out, 0, rows.data.length);
    return kvTensor(rows.shape, rows.dtype, out);
  }

  #assertUsable(): void {
    if (this.#disposed) throw new CacheError('This quantized layer was disposed; create a new cache to generate again.');
    if (this.#failure !== null) {
      throw new CacheError(
        `This quantized layer is unusable: an earlier update failed inside the ${this.#quantizer.backend} quantizer ` +
        `(${this.#failure.message}) and left it half-updated. Create a new cache with settings the backend accepts.`,
        { cause: this.#failure },
      );
    }
  }
}

/** A KvTensor's values as KvRows: float32 as is, float16 as binary16 bits. */
function rowsOf(x: KvTensor): KvRows {
  if (x.dtype === 'float32') return { shape: x.shape, dtype: 'float32', data: x.data };
  const bits = new Uint16Array(x.data.length);
  float32ToHalfBitsInto(x.data, 0, bits, 0, x.data.length);
  return { shape: x.shape, dtype: 'float16', data: bits };
}

/** checkUpdate's checks on rows (the same messages), plus storage matching the dtype. */
function checkRows(key: KvRows, value: KvRows, expected: KvPairGeometry | null): number {
  for (const rows of [key, value]) {
    const count = rows.shape[0] * rows.shape[1] * rows.shape[2] * rows.shape[3];
    if ((rows.data instanceof Uint16Array) !== (rows.dtype === 'float16') || rows.data.length !== count) {
      throw new CacheError(`new rows of shape [${rows.shape.join(', ')}] ${rows.dtype} need ${count} ${rows.dtype === 'float16' ? 'binary16 bit patterns (Uint16Array)' : 'float32 values'}, got ${rows.data.length} in a ${rows.data.constructor.name}.`);
    }
  }
  const shell = (rows: KvRows): KvTensor => ({ shape: rows.shape, dtype: rows.dtype, data: NO_VALUES });
  return checkUpdate(shell(key), shell(value), expected);
}

/** checkUpdate reads shapes and dtypes only: one empty array for every call, none allocated per step. */
const NO_VALUES = new Float32Array(0);
