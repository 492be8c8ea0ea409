import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { CacheLayerPlan } from '../cache/layer-plan.js';
import { FlushScratch } from '../cache/flush-scratch.js';
import { planLayerQuantization } from '../cache/quantization-plan.js';
import type { LayerMemory } from '../cache/layer-memory.js';
import type { KvRows } from '../cache/stored-parts.js';
import { StoredQuantizedLayer } from '../cache/stored-quantized-layer.js';
import { codesAreInt32Words, emptyStoreShapes, zeroInputOf, type InGraphKvIo, type InGraphSideIo } from '../onnx/rewrite/in-graph-spec.js';
import type { QuantBackend, QuantParams, QuantizedTensor, Quantizer } from '../quant/types.js';
import { float32ToHalfBitsInto } from '../tensor/float16-bits.js';
import type { KvDtype } from '../tensor/kv-tensor.js';
import type { DecoderIo, KvLayerIo } from './decoder-io.js';
import type { SessionOutputs } from './decoder-session.js';
import { PassThroughKvLane } from './dynamic-kv-lane.js';
import { GenerationError } from './engine-errors.js';
import type { LayerQuantizeError } from './generation-result.js';
import { floatTensor, int32Tensor, uint8Tensor, type FloatHostTensor, type HostTensor } from './host-tensor.js';
import type { AbsorbResult, KvLane } from './kv-lane.js';
import { readPresent, type KvDims } from './kv-present.js';
import { copySlabRows } from './slab-rows.js';
import type { FlushMetrics } from './types.js';

/**
 * The in-graph dequantization lane (`--dequantize graph`): only what transformers' `QuantizedLayer`
 * stores crosses into ONNX Runtime, and only the new rows come back.
 *
 * The graph was rewritten (app/onnx/rewrite/in-graph-dequantize.ts) so that each quantized layer's past
 * is fed as the store (packed codes, scale, zero in T) and the residual, and dequantized inside the
 * graph exactly as the quantizers do; its output is the rows this run adds. The cache layers
 * (StoredQuantizedLayer) hold the store and the residual and nothing else, so no dequantized history
 * lives in JavaScript between steps, and inside ORT only the layer being computed has one (the
 * rewrite's gates). The semantics are CacheKvLane's: what attention sees is `[deq(Q) | residual]`
 * as of before the step, followed by the new rows (spec §1.3): the graph computes exactly the
 * tensor CacheKvLane feeds, so logits agree bit for bit (tests: app/node/in-graph-parity).
 *
 * Layers the plan keeps dynamic (a layer policy, full-precision layers) and hybrid states are fed by a
 * pass-through lane of their own, exactly as the dynamic cache feeds them: present back as past.
 *
 * Designed for device-resident caches: the feeds are the store's own arrays, replaced only at quantize
 * events (codes, scale, zero) and growing by the new rows otherwise (the residual), and the outputs
 * are one row per layer and side: on CUDA or DirectML an I/O-binding session can keep the codes on the
 * device between events and bind preallocated new-rows outputs (not wired in onnxruntime-node here).
 */
export interface GraphLaneOptions {
  /** the source graph's I/O (token inputs, logits, states, and every KV layer as the source names it) */
  readonly io: DecoderIo;
  /** the rewritten graph's names for its quantized layers */
  readonly kv: InGraphKvIo;
  readonly numLayers: number;
  readonly plan: readonly CacheLayerPlan[];
  readonly settings: QuantizedCacheSettings;
  readonly quantizer: Quantizer;
  readonly dims: ReadonlyMap<number, { readonly key: KvDims; readonly value: KvDims }>;
  /** frees a buffer nothing reads any more (Node: app/node/free-array-buffer.ts): replaced stores go at once */
  readonly releaseBuffer?: (buffer: ArrayBufferLike) => void;
  /** per decoder layer, the window transformers' DynamicSlidingWindowLayer keeps (null: none); for the dynamic layers */
  readonly slidingWindows?: readonly (number | null)[];
  /** keep every row in the residual, never quantized: the full-precision reference on the rewritten graph */
  readonly keepFullPrecision?: boolean;
}

interface QuantizedSide {
  readonly io: InGraphSideIo;
  readonly dims: KvDims;
  readonly params: QuantParams;
  /** float16: the store's scale and zero as binary16 bits, rebuilt when the store changes */
  scaleBits: Uint16Array;
  zeroBits: Uint16Array;
  bitsVersion: number;
}

interface QuantizedLayerLane {
  readonly kind: 'quantized';
  readonly layer: number;
  readonly cache: StoredQuantizedLayer;
  readonly key: QuantizedSide;
  readonly value: QuantizedSide;
  eventsSeen: number;
}

export class GraphKvLane implements KvLane {
  readonly #dtype: KvDtype;
  readonly #backend: QuantBackend;
  readonly #layers: QuantizedLayerLane[];
  /** the plan's dynamic layers and the hybrid states, fed exactly as the pass-through lane feeds them */
  readonly #passThrough: PassThroughKvLane;
  readonly #scratch = new FlushScratch();
  #seq = 0;
  /** the past length the last run was fed with: its new-rows outputs hold positions #runStart … */
  #runStart = 0;

  constructor(options: GraphLaneOptions) {
    const { io, kv, plan, settings, quantizer } = options;
    this.#dtype = io.kvDtype ?? 'float32';
    this.#backend = quantizer.backend;
    const rewritten = new Map(kv.layers.map((layer) => [layer.layer, layer]));
    const release = options.releaseBuffer;
    // A store's arrays are its own (the quantizers copy them out of their working memory) and are read
    // only while the next run is fed: once replaced, nothing refers to them.
    const releaseStore = release === undefined ? undefined : (store: QuantizedTensor): void => {
      for (const array of [store.packed, store.scale, store.zero]) {
        if (array.byteOffset === 0 && array.byteLength === array.buffer.byteLength) release(array.buffer);
      }
    };
    const dynamicLayers: KvLayerIo[] = [];
    this.#layers = io.kvLayers.flatMap((layerIo): QuantizedLayerLane[] => {
      const dims = options.dims.get(layerIo.layer)!;
      const layerPlan = plan[layerIo.layer];
      const inGraph = rewritten.get(layerIo.layer);
      if (layerPlan === 'quantized') {
        // K and V parameters as the host path's cache plans them (app/cache/quantization-plan.ts)
        const quantization = planLayerQuantization(settings, layerIo.layer, options.numLayers);
        if (inGraph === undefined || quantization === null) {
          throw new GenerationError(`layer ${layerIo.layer} is quantized but the rewritten graph still takes its past as full-precision tensors.`,
            'Rewrite the graph for these cache settings (the in-graph cache is keyed by them), or run with --dequantize host.');
        }
        const { key: { params: keyParams }, value: { params: valueParams } } = quantization;
        return [{
          kind: 'quantized',
          layer: layerIo.layer,
          cache: new StoredQuantizedLayer(quantizer, { key: keyParams, value: valueParams, residualLength: settings.residualLength, keepFullPrecision: options.keepFullPrecision === true }, this.#scratch, releaseStore),
          key: side(inGraph.key, dims.key, keyParams),
          value: side(inGraph.value, dims.value, valueParams),
          eventsSeen: 0,
        }];
      }
      if (layerPlan !== 'dynamic' || inGraph !== undefined) {
        throw new GenerationError(`the cache plan says "${String(layerPlan)}" for layer ${layerIo.layer}, which the graph has KV inputs for.`,
          'Check that config.json (layer_types) belongs to this graph.');
      }
      dynamicLayers.push(layerIo);
      return [];
    });
    this.#passThrough = new PassThroughKvLane({
      io: { ...io, kvLayers: dynamicLayers }, numLayers: options.numLayers, dims: options.dims,
      ...(options.slidingWindows === undefined ? {} : { slidingWindows: options.slidingWindows }),
    });
  }

  get seqLength(): number {
    return this.#seq;
  }

  /** Feeds the stores and residuals as they are (no copy); returns the bytes that cross into the graph. */
  addFeeds(feeds: Record<string, HostTensor>): number {
    this.#runStart = this.#seq;
    let bytes = this.#passThrough.addFeeds(feeds);
    for (const layer of this.#layers) bytes += this.#feedSide(feeds, layer, 'key') + this.#feedSide(feeds, layer, 'value');
    return bytes;
  }

  absorb(outputs: SessionOutputs, newTokens: number): AbsorbResult {
    const seq = this.#seq + newTokens;
    const flushes: FlushMetrics[] = [];
    this.#passThrough.absorb(outputs, newTokens);
    for (const layer of this.#layers) {
      // The graph returns only this run's rows; the layer copies them into its residual or quantizes them.
      layer.cache.append(this.#rows(outputs, layer.key, newTokens), this.#rows(outputs, layer.value, newTokens));
      const events = layer.cache.events;
      for (let i = layer.eventsSeen; i < events.length; i++) {
        const event = events[i]!;
        flushes.push({ layer: layer.layer, kind: event.kind, tokens: event.tokens, key: event.key, value: event.value });
      }
      layer.eventsSeen = events.length;
    }
    this.#seq = seq;
    // The graph dequantizes: nothing is dequantized here for the next feeds (flushes count as quantize time).
    return { flushes, dequantizeMs: 0 };
  }

  /**
   * Stored bytes per layer. A quantized layer's workingBytes are its residual buffers; the cache-wide
   * flush scratch (one layer's history, FlushScratch) is reported with the first quantized layer.
   */
  memory(): (LayerMemory | null)[] {
    const memory = this.#passThrough.memory();
    let scratchReported = false;
    for (const layer of this.#layers) {
      const own = layer.cache.memory();
      const extra = (scratchReported ? 0 : this.#scratch.capacityBytes) + paramBitsBytes(layer.key) + paramBitsBytes(layer.value);
      scratchReported = true;
      memory[layer.layer] = { ...own, workingBytes: own.workingBytes + extra };
    }
    return memory;
  }

  flushCounts(): (number | null)[] {
    const counts = this.#passThrough.flushCounts();
    for (const layer of this.#layers) counts[layer.layer] = layer.cache.flushCount;
    return counts;
  }

  lastErrors(): (LayerQuantizeError | null)[] {
    const errors = this.#passThrough.lastErrors();
    for (const layer of this.#layers) {
      const last = layer.cache.events[layer.cache.events.length - 1];
      if (last !== undefined) errors[layer.layer] = { layer: layer.layer, step: last.step, kind: last.kind, key: last.key, value: last.value };
    }
    return errors;
  }

  /** Quantized layers keep no output (they copy the new rows); dynamic pasts and states are outputs fed back. */
  references(buffer: ArrayBufferLike): boolean {
    return this.#passThrough.references(buffer);
  }

  dispose(): void {
    for (const layer of this.#layers) {
      layer.cache.dispose();
      for (const s of [layer.key, layer.value]) {
        s.scaleBits = new Uint16Array(0);
        s.zeroBits = new Uint16Array(0);
      }
    }
    this.#passThrough.dispose();
    this.#scratch.dispose();
  }

  #feedSide(feeds: Record<string, HostTensor>, layer: QuantizedLayerLane, part: 'key' | 'value'): number {
    const s = layer[part];
    const stored = layer.cache.stored(part);
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
      if (rows === 0) throw new GenerationError(`layer ${layer.layer}'s ${part} store has no rows after the prefill.`);
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

  /**
   * This absorb's rows of a side's new-rows output. A run's tokens may reach the cache in several
   * updates (StepRunner: a chunk that ends at a flush step is absorbed as n − 1 tokens, then 1), and
   * the output holds all of the run's rows, positions #runStart …: each update takes the rows from
   * #seq on (a copy when it is not the whole output).
   */
  #rows(outputs: SessionOutputs, s: QuantizedSide, newTokens: number): KvRows {
    const type = this.#dtype === 'float16' ? 'float16' : 'float32';
    const offset = this.#seq - this.#runStart;
    const { kvHeads, headDim } = s.dims;
    const length = outputs[s.io.newRows]?.dims[2];
    // Anything but a run that holds these rows is readPresent's to report (missing, wrong dtype or shape).
    const runRows = typeof length === 'number' && offset + newTokens <= length ? length : offset + newTokens;
    const tensor = readPresent(outputs, s.io.newRows, type, s.dims, runRows);
    const shape = [1, kvHeads, newTokens, headDim] as const;
    if (runRows === newTokens) return { shape, dtype: this.#dtype, data: tensor.data };
    const data = tensor.data instanceof Float32Array ? new Float32Array(kvHeads * newTokens * headDim) : new Uint16Array(kvHeads * newTokens * headDim);
    copySlabRows(tensor.data, runRows, offset, data, newTokens, 0, newTokens, kvHeads, headDim);
    return { shape, dtype: this.#dtype, data };
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

function emptyFloat(dtype: KvDtype, dims: readonly number[]): FloatHostTensor {
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
