import type { FlushScratch } from '../cache/flush-scratch.js';
import type { LayerMemory } from '../cache/layer-memory.js';
import type { LayerQuantization } from '../cache/quantization-plan.js';
import { StoredQuantizedLayer } from '../cache/stored-quantized-layer.js';
import { codesAreInt32Words, emptyStoreShapes, zeroInputOf, type InGraphLayerIo, type InGraphSideIo } from '../onnx/rewrite/in-graph-spec.js';
import type { QuantBackend, QuantParams, QuantizedTensor, Quantizer } from '../quant/types.js';
import { float32ToHalfBitsInto } from '../tensor/float16-bits.js';
import type { KvDtype } from '../tensor/kv-tensor.js';
import { GenerationError } from './engine-errors.js';
import type { LayerQuantizeError } from './generation-result.js';
import type { GraphLayerLane, NewRows } from './graph-layer-lane.js';
import { floatTensor, int32Tensor, uint8Tensor, type FloatHostTensor, type HostTensor } from './host-tensor.js';
import type { KvDims } from './kv-present.js';
import type { FlushMetrics } from './types.js';

interface QuantizedSide {
  readonly io: InGraphSideIo;
  readonly dims: KvDims;
  readonly params: QuantParams;
  /** float16: the store's scale and zero as binary16 bits, rebuilt when the store changes */
  scaleBits: Uint16Array;
  zeroBits: Uint16Array;
  bitsVersion: number;
}

export interface StoreLayerOptions {
  readonly layer: number;
  readonly io: InGraphLayerIo;
  readonly dims: { readonly key: KvDims; readonly value: KvDims };
  readonly dtype: KvDtype;
  readonly quantizer: Quantizer;
  readonly quantization: LayerQuantization;
  readonly residualLength: number;
  /** the cache-wide flush scratch (one layer's history), shared by every store layer */
  readonly scratch: FlushScratch;
  /** whether this layer's memory carries the shared scratch (the first store layer's does) */
  readonly reportsScratch: boolean;
  readonly keepFullPrecision: boolean;
  readonly releaseBuffer?: ((buffer: ArrayBufferLike) => void) | undefined;
}

/**
 * One layer of transformers' QuantizedLayer on the graph path (GraphKvLane): only the store (packed
 * codes, scale, zero in T) and the residual cross into the rewritten graph, which dequantizes them
 * exactly as the quantizers do; the layer (StoredQuantizedLayer) holds nothing else.
 */
export class StoreLayerLane implements GraphLayerLane {
  readonly layer: number;
  readonly #cache: StoredQuantizedLayer;
  readonly #dtype: KvDtype;
  readonly #backend: QuantBackend;
  readonly #key: QuantizedSide;
  readonly #value: QuantizedSide;
  readonly #scratch: FlushScratch;
  readonly #reportsScratch: boolean;
  #eventsSeen = 0;

  constructor(options: StoreLayerOptions) {
    const { quantization: { key: { params: keyParams }, value: { params: valueParams } }, quantizer, releaseBuffer: release } = options;
    this.layer = options.layer;
    this.#dtype = options.dtype;
    this.#backend = quantizer.backend;
    this.#scratch = options.scratch;
    this.#reportsScratch = options.reportsScratch;
    // A store's arrays are its own (the quantizers copy them out of their working memory) and are read
    // only while the next run is fed: once replaced, nothing refers to them.
    const releaseStore = release === undefined ? undefined : (store: QuantizedTensor): void => {
      for (const array of [store.packed, store.scale, store.zero]) {
        if (array.byteOffset === 0 && array.byteLength === array.buffer.byteLength) release(array.buffer);
      }
    };
    this.#cache = new StoredQuantizedLayer(quantizer, { key: keyParams, value: valueParams, residualLength: options.residualLength, keepFullPrecision: options.keepFullPrecision }, options.scratch, releaseStore);
    this.#key = side(options.io.key, options.dims.key, keyParams);
    this.#value = side(options.io.value, options.dims.value, valueParams);
  }

  get flushCount(): number {
    return this.#cache.flushCount;
  }

  feed(feeds: Record<string, HostTensor>): number {
    return this.#feedSide(feeds, 'key') + this.#feedSide(feeds, 'value');
  }

  absorb(rows: NewRows, newTokens: number, flushes: FlushMetrics[]): void {
    // The graph returns only this run's rows; the layer copies them into its residual or quantizes them.
    this.#cache.append(rows(this.#key.io, this.#key.dims, newTokens), rows(this.#value.io, this.#value.dims, newTokens));
    const events = this.#cache.events;
    for (let i = this.#eventsSeen; i < events.length; i++) {
      const event = events[i]!;
      flushes.push({ layer: this.layer, kind: event.kind, tokens: event.tokens, key: event.key, value: event.value });
    }
    this.#eventsSeen = events.length;
  }

  /** Stored bytes; workingBytes are the residual buffers, the binary16 parameter bits and (once per lane) the flush scratch. */
  memory(): LayerMemory {
    const own = this.#cache.memory();
    const extra = (this.#reportsScratch ? this.#scratch.capacityBytes : 0) + paramBitsBytes(this.#key) + paramBitsBytes(this.#value);
    return { ...own, workingBytes: own.workingBytes + extra };
  }

  lastError(): LayerQuantizeError | null {
    const last = this.#cache.events[this.#cache.events.length - 1];
    return last === undefined ? null : { layer: this.layer, step: last.step, kind: last.kind, key: last.key, value: last.value };
  }

  dispose(): void {
    this.#cache.dispose();
    for (const s of [this.#key, this.#value]) {
      s.scaleBits = new Uint16Array(0);
      s.zeroBits = new Uint16Array(0);
    }
  }

  #feedSide(feeds: Record<string, HostTensor>, part: 'key' | 'value'): number {
    const s = part === 'key' ? this.#key : this.#value;
    const stored = this.#cache.stored(part);
    const { kvHeads, headDim } = s.dims;
    const store = stored.store;
    const int32Words = codesAreInt32Words({ backend: this.#backend, nbits: s.params.nbits });
    let codes: HostTensor;
    let scale: FloatHostTensor;
    let zero: FloatHostTensor;
    if (store === null) {
      const empty = emptyStoreShapes({ backend: this.#backend, ...s.params });
      codes = int32Words ? int32Tensor(empty.codes, new Int32Array(0)) : uint8Tensor(empty.codes, new Uint8Array(0));
      scale = emptyFloat(this.#dtype, empty.params);
      zero = emptyFloat(this.#dtype, empty.params);
    } else {
      const [rows, cols] = store.gridShape;
      // HQQ 3-bit: the int32 words as they are (in-graph-spec.ts codesAreInt32Words)
      codes = int32Words
        ? int32Tensor([cols === 0 ? 0 : store.packed.length / 4 / cols, cols], int32View(store.packed))
        : uint8Tensor([cols === 0 ? 0 : store.packed.length / cols, cols], store.packed);
      const paramDims = [...store.paramShape];
      if (this.#dtype === 'float16') {
        if (s.bitsVersion !== stored.storeVersion) {
          s.scaleBits = halfBits(store.scale, s.scaleBits);
          s.zeroBits = halfBits(store.zero, s.zeroBits);
          s.bitsVersion = stored.storeVersion;
        }
        scale = floatTensor('float16', paramDims, s.scaleBits.subarray(0, store.scale.length));
        zero = floatTensor('float16', paramDims, s.zeroBits.subarray(0, store.zero.length));
      } else {
        scale = floatTensor('float32', paramDims, store.scale);
        zero = floatTensor('float32', paramDims, store.zero);
      }
      if (rows === 0) throw new GenerationError(`layer ${this.layer}'s ${part} store has no rows after the prefill.`);
    }
    // Before the prefill the layer has no dtype yet: an empty residual of the graph's.
    const residual = stored.residualTokens === 0
      ? emptyFloat(this.#dtype, [1, kvHeads, 0, headDim])
      : floatTensor(this.#dtype, [1, kvHeads, stored.residualTokens, headDim], stored.residual);
    feeds[s.io.codes] = codes;
    feeds[s.io.scale] = scale;
    feeds[zeroInputOf(s.io)] = zero;
    feeds[s.io.residual] = residual;
    return codes.data.byteLength + scale.data.byteLength + zero.data.byteLength + residual.data.byteLength;
  }
}

/** The store's little-endian int32 words as an Int32Array over the same bytes (a copy only when unaligned). */
export function int32View(bytes: Uint8Array): Int32Array {
  if (bytes.byteOffset % 4 === 0) return new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const copy = new Uint8Array(bytes);
  return new Int32Array(copy.buffer, 0, copy.byteLength / 4);
}

function side(io: InGraphSideIo, dims: KvDims, params: QuantParams): QuantizedSide {
  return { io, dims, params, scaleBits: new Uint16Array(0), zeroBits: new Uint16Array(0), bitsVersion: -1 };
}

export function emptyFloat(dtype: KvDtype, dims: readonly number[]): FloatHostTensor {
  return dtype === 'float16' ? floatTensor('float16', dims, new Uint16Array(0)) : floatTensor('float32', dims, new Float32Array(0));
}

/** `values` (binary16-exact float32) as bits, into `reuse` when it is large enough. */
function halfBits(values: Float32Array, reuse: Uint16Array): Uint16Array {
  const out = reuse.length >= values.length ? reuse : new Uint16Array(Math.max(values.length, Math.ceil(reuse.length * 1.25)));
  float32ToHalfBitsInto(values, 0, out, 0, values.length);
  return out;
}

function paramBitsBytes(s: QuantizedSide): number {
  return s.scaleBits.byteLength + s.zeroBits.byteLength;
}
