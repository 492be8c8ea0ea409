import type { LayerMemory } from '../cache/layer-memory.js';
import { ResidualRows } from '../cache/residual-rows.js';
import type { KvRows } from '../cache/stored-parts.js';
import { WriteOnceLayer } from '../cache/write-once-layer.js';
import type { InGraphLayerIo, InGraphSideIo } from '../onnx/rewrite/in-graph-spec.js';
import type { RuntimeFormat } from '../quant/runtime-formats/types.js';
import { halfBitsToFloat32Into } from '../tensor/float16-bits.js';
import { kvTensor, type KvDtype, type KvTensor } from '../tensor/kv-tensor.js';
import type { LayerQuantizeError } from './generation-result.js';
import type { GraphLayerLane, NewRows } from './graph-layer-lane.js';
import { emptyFloat } from './graph-store-layer.js';
import { floatTensor, uint8Tensor, type HostTensor } from './host-tensor.js';
import type { KvDims } from './kv-present.js';

/** float32 `[kvHeads, n, headDim]` scratch for one side's new float16 rows, shared by a lane's format layers. */
export class WideningScratch {
  array = new Float32Array(0);
}

interface FormatSide {
  readonly io: InGraphSideIo;
  readonly dims: KvDims;
  readonly rowBytes: number;
  /** the reference replay's rows (keepFullPrecision), else null */
  readonly residual: ResidualRows | null;
}

export interface FormatLayerOptions {
  readonly layer: number;
  readonly io: InGraphLayerIo;
  readonly dims: { readonly key: KvDims; readonly value: KvDims };
  readonly dtype: KvDtype;
  readonly key: RuntimeFormat;
  readonly value: RuntimeFormat;
  readonly calculateKvScales: boolean;
  readonly scratch: WideningScratch;
  readonly keepFullPrecision: boolean;
}

/**
 * One layer of a runtime's write-once KV format on the graph path (issue 27, point 3; a kvscope
 * extension): its rows cross into the graph as the runtime's bytes, uint8 `[tokens·kvHeads, rowBytes]`
 * exactly as the WriteOnceLayer stores them, with the per-tensor fp32 scale; the rewritten graph
 * dequantizes them (app/onnx/rewrite/dequantize-format-side.ts) and returns only this run's new rows,
 * which the layer encodes when it absorbs them. What attention sees is the host path's
 * `[deq(rows) | new rows]` (CacheKvLane over a WriteOnceLayer), computed in the graph bit for bit.
 *
 * `keepFullPrecision` is the reference replay on the same rewritten graph: no row is encoded, every
 * row is fed as the residual (the DynamicCache's history), the store stays empty.
 */
export class FormatLayerLane implements GraphLayerLane {
  readonly layer: number;
  readonly #cache: WriteOnceLayer;
  readonly #dtype: KvDtype;
  readonly #key: FormatSide;
  readonly #value: FormatSide;
  readonly #scratch: WideningScratch;
  readonly #keepFullPrecision: boolean;

  constructor(options: FormatLayerOptions) {
    this.layer = options.layer;
    this.#dtype = options.dtype;
    this.#scratch = options.scratch;
    this.#keepFullPrecision = options.keepFullPrecision;
    this.#cache = new WriteOnceLayer(options.key, options.value, { calculateKvScales: options.calculateKvScales, keepDequantized: false });
    this.#key = this.#side(options.io.key, options.dims.key, options.key, 'key');
    this.#value = this.#side(options.io.value, options.dims.value, options.value, 'value');
  }

  /** Written once: never flushed (WriteOnceLayer.flushCount), as on the host path. */
  get flushCount(): number {
    return this.#cache.flushCount;
  }

  feed(feeds: Record<string, HostTensor>): number {
    return this.#feedSide(feeds, 'key') + this.#feedSide(feeds, 'value');
  }

  absorb(rows: NewRows, newTokens: number): void {
    if (this.#keepFullPrecision) {
      for (const s of [this.#key, this.#value]) s.residual!.append(rows(s.io, s.dims, newTokens).data, newTokens);
      return;
    }
    const key = this.#widened(rows(this.#key.io, this.#key.dims, newTokens));
    // float16 rows are widened into the shared scratch: the keys' are copied before the values' land there
    const keyRows = key.data.buffer === this.#scratch.array.buffer ? kvTensor(key.shape, key.dtype, key.data.slice()) : key;
    this.#cache.append(keyRows, this.#widened(rows(this.#value.io, this.#value.dims, newTokens)));
  }

  memory(): LayerMemory {
    const own = this.#cache.memory();
    const residual = (this.#key.residual?.capacityBytes ?? 0) + (this.#value.residual?.capacityBytes ?? 0);
    return { ...own, workingBytes: own.workingBytes + residual + this.#scratch.array.byteLength };
  }

  /** No quantize events (WriteOnceLayer.events is empty), so no last error, as on the host path. */
  lastError(): LayerQuantizeError | null {
    return null;
  }

  dispose(): void {
    this.#cache.dispose();
    this.#key.residual?.dispose();
    this.#value.residual?.dispose();
    this.#scratch.array = new Float32Array(0);
  }

  #side(io: InGraphSideIo, dims: KvDims, format: RuntimeFormat, part: 'key' | 'value'): FormatSide {
    const rowBytes = format.rowBytes({ headDim: dims.headDim, dtype: this.#dtype, side: part });
    const residual = this.#keepFullPrecision ? new ResidualRows(this.#dtype, dims.kvHeads, dims.headDim) : null;
    return { io, dims, rowBytes, residual };
  }

  #feedSide(feeds: Record<string, HostTensor>, part: 'key' | 'value'): number {
    const s = part === 'key' ? this.#key : this.#value;
    const { kvHeads, headDim } = s.dims;
    const stored = this.#cache.storedBytes(part) ?? new Uint8Array(0);
    const codes = uint8Tensor([stored.length / s.rowBytes, s.rowBytes], stored);
    const scale = floatTensor('float32', [1], Float32Array.of(this.#cache.tensorParams(part)?.tensorScale ?? 1));
    const residualTokens = s.residual?.tokens ?? 0;
    const residual = residualTokens === 0 ? emptyFloat(this.#dtype, [1, kvHeads, 0, headDim]) : floatTensor(this.#dtype, [1, kvHeads, residualTokens, headDim], s.residual!.view());
    feeds[s.io.codes] = codes;
    feeds[s.io.scale] = scale;
    feeds[s.io.residual] = residual;
    return codes.data.byteLength + scale.data.byteLength + residual.data.byteLength;
  }

  /** The new rows as the float32 KvTensor the write-once layer encodes (float16 bits widened exactly). */
  #widened(rows: KvRows): KvTensor {
    const raw = rows.data;
    if (raw instanceof Float32Array) return kvTensor(rows.shape, this.#dtype, raw);
    if (this.#scratch.array.length < raw.length) this.#scratch.array = new Float32Array(Math.max(raw.length, 2 * this.#scratch.array.length));
    const out = this.#scratch.array.subarray(0, raw.length);
    halfBitsToFloat32Into(raw, 0, out, 0, raw.length);
    return kvTensor(rows.shape, this.#dtype, out);
  }
}
