import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { CacheLayer } from '../cache/cache-layer.js';
import { KvCache } from '../cache/kv-cache.js';
import type { LayerMemory } from '../cache/layer-memory.js';
import type { CacheLayerPlan } from '../cache/layer-plan.js';
import { QuantizedLayer } from '../cache/quantized-layer.js';
import type { Quantizer } from '../quant/types.js';
import { kvTensor, type KvTensor } from '../tensor/kv-tensor.js';
import type { DecoderIo, KvLayerIo } from './decoder-io.js';
import type { SessionOutputs } from './decoder-session.js';
import { GenerationError } from './engine-errors.js';
import { float32ToHalfBitsInto, halfBitsToFloat32Into } from '../tensor/float16-bits.js';
import type { LayerQuantizeError } from './generation-result.js';
import { floatTensor, type FloatHostTensor, type HostTensor } from './host-tensor.js';
import { emptyPast } from './dynamic-kv-lane.js';
import type { AbsorbResult, KvLane } from './kv-lane.js';
import type { KvDims } from './kv-present.js';
import { LayerKvPacking } from './kv-packing.js';
import { copySlabRows } from './slab-rows.js';
import { StateFeeds } from './state-feeds.js';
import type { FlushMetrics } from './types.js';

/**
 * THE boundary between kvscope's KvCache and the graph's feeds (the one module that crosses it; a
 * later step moves dequantization into the graph so that only codes cross here).
 *
 * What attention sees (spec §1.3). In transformers the layer update runs inside attention: at decode
 * step t, attention computes k_t and attends to `update(k_t)` = `[deq(Q) | residual | k_t]`, where Q and
 * the residual are the cache state before step t; a flush inside that update changes only what step
 * t+1 sees. An Optimum ONNX graph instead concatenates `[past | k_t]` internally and attends to that.
 * So feeding past = `[deq(Q) | residual]` as of before step t gives attention exactly the tensor
 * transformers' update returns, and present's last n rows are k_t itself, which we pass to
 * `KvCache.update` to advance the state the same way transformers does. Hence:
 * - after a step without a quantize event, the next past is what `update` returned (`[deq(Q) | residual | k_t]`
 *   is the new `[deq(Q) | residual]`);
 * - after a quantize event (the prefill, or a flush) the residual is empty and the next past is
 *   `deq(Q_new)`, NOT what `update` returned: that is why the next step sees the flush.
 * The one place attention sees exact keys and values is the prefill, which the graph computes from
 * an empty past; that matches §1.3 consequence 1 (prefill returns its inputs unchanged).
 *
 * fp16-KV graphs: the cache holds fp16-exact values as float32 (app/tensor/kv-tensor.ts), the graph
 * wants binary16 bits; the conversion happens here, on the new rows per step and on the whole
 * history only at a quantize event. Between events the next past is present itself, already in
 * binary16 (present = [past fed | new] = what the update returned), fed back without a copy.
 */
export interface CacheLaneOptions {
  readonly io: DecoderIo;
  readonly numLayers: number;
  /** one entry per decoder layer */
  readonly plan: readonly CacheLayerPlan[];
  readonly settings: QuantizedCacheSettings;
  readonly quantizer?: Quantizer;
  readonly dims: ReadonlyMap<number, { readonly key: KvDims; readonly value: KvDims }>;
  /** milliseconds, for the dequantize share of `absorb` */
  readonly now: () => number;
  /** per decoder layer, the window transformers' DynamicSlidingWindowLayer keeps (null: none); see KvCacheOptions */
  readonly slidingWindows?: readonly (number | null)[];
}

/** One of a layer's two inputs (keys or values) as the next run will be fed. */
interface PastSide {
  readonly dims: KvDims;
  /** fp32 graphs: the past to feed, `[1, kvHeads, seq, headDim]` (a view into the cache's own buffers) */
  past: Float32Array;
  /** fp16 graphs: the past as binary16 bits (present's own array, or a view of `bitsStore`); null for fp32 */
  pastBits: Uint16Array | null;
  /** fp16 graphs: deq(store) in binary16 after a quantize event, reused (grows to the longest history) */
  bitsStore: Uint16Array;
  /** the new rows in float32, reused across steps */
  scratch: Float32Array;
}

interface LayerBoundary {
  readonly io: KvLayerIo;
  readonly cacheLayer: CacheLayer;
  readonly key: PastSide;
  readonly value: PastSide;
  /** the graph's packing of this layer's past and present (per-layer, or GPT-2's combined past_N) */
  readonly packing: LayerKvPacking;
  /** events of the cache layer already reported */
  eventsSeen: number;
}

export class CacheKvLane implements KvLane {
  readonly #cache: KvCache;
  readonly #numLayers: number;
  readonly #layers: LayerBoundary[];
  readonly #fp16: boolean;
  readonly #states: StateFeeds;
  readonly #now: () => number;
  #seq = 0;

  constructor(options: CacheLaneOptions) {
    const { io, plan } = options;
    this.#cache = new KvCache({
      plan, settings: options.settings,
      ...(options.quantizer === undefined ? {} : { quantizer: options.quantizer }),
      ...(options.slidingWindows === undefined ? {} : { slidingWindows: options.slidingWindows }),
    });
    this.#numLayers = options.numLayers;
    this.#fp16 = io.kvDtype === 'float16';
    this.#now = options.now;
    this.#layers = io.kvLayers.map((layerIo) => {
      const cacheLayer = this.#cache.layer(layerIo.layer);
      if (cacheLayer === null) {
        throw new GenerationError(
          `the cache plan keeps no KV cache for layer ${layerIo.layer}, but the graph has ${layerIo.pastKey}.`,
          'Check that config.json (layer_types) belongs to this graph.',
        );
      }
      const dims = options.dims.get(layerIo.layer)!;
      return {
        io: layerIo, cacheLayer, key: this.#side(dims.key), value: this.#side(dims.value),
        packing: new LayerKvPacking(layerIo, dims, io.presentMayExceedValidLength), eventsSeen: 0,
      };
    });
    this.#states = new StateFeeds(io.states);
  }

  get seqLength(): number {
    return this.#seq;
  }

  addFeeds(feeds: Record<string, HostTensor>): number {
    let bytes = 0;
    for (const layer of this.#layers) {
      const key = this.#pastTensor(layer.key);
      const value = this.#pastTensor(layer.value);
      bytes += layer.packing.feed(feeds, key, value);
    }
    this.#states.addFeeds(feeds);
    return bytes;
  }

  absorb(outputs: SessionOutputs, newTokens: number): AbsorbResult {
    const past = this.#seq;
    const seq = past + newTokens;
    const flushes: FlushMetrics[] = [];
    let dequantizeMs = 0;
    for (const layer of this.#layers) {
      const { key: presentKey, value: presentValue } = layer.packing.read(outputs, seq);
      // present = [past | new]: only the last n rows are new (the graph copied our past in front).
      const newKey = this.#newRows(layer.key, presentKey, past, newTokens);
      const newValue = this.#newRows(layer.value, presentValue, past, newTokens);
      // fp32 graphs: present is exactly what the update returns, [past fed | new] (see above), so the
      // cache adopts it rather than moving its whole history up a row every step (32 MB a step at 2k
      // tokens on the 8-layer model). fp16 presents are binary16 bits, not the cache's float32 values.
      const concatenated = presentKey.type === 'float32' && presentValue.type === 'float32'
        ? { key: presentKey.data, value: presentValue.data }
        : undefined;
      const returned = this.#cache.update(layer.io.layer, newKey, newValue, concatenated);
      const events = layer.cacheLayer.events;
      if (events.length > layer.eventsSeen) {
        // A quantize event (prefill or flush): the residual is empty, the next past is deq(Q_new).
        const start = this.#now();
        this.#pastFromStore(layer, 'key');
        this.#pastFromStore(layer, 'value');
        dequantizeMs += this.#now() - start;
        for (let i = layer.eventsSeen; i < events.length; i++) {
          const event = events[i]!;
          flushes.push({ layer: layer.io.layer, kind: event.kind, tokens: event.tokens, key: event.key, value: event.value });
        }
        layer.eventsSeen = events.length;
      } else if (layer.cacheLayer.kind === 'write-once') {
        // A runtime format's layer (--kv-format) returns deq(every row), never present itself.
        this.#pastFromValues(layer.key, returned.key.data);
        this.#pastFromValues(layer.value, returned.value.data);
      } else {
        // No event: the next past is what this update returned, [deq(Q) | residual | new].
        this.#pastFromUpdate(layer.key, returned.key, presentKey);
        this.#pastFromUpdate(layer.value, returned.value, presentValue);
      }
    }
    this.#states.absorb(outputs);
    this.#seq = seq;
    return { flushes, dequantizeMs };
  }

  /** The cache's own layer (a QuantizedLayer's stores, for the lab's per-side accounting); null where the plan keeps none. */
  cacheLayer(layer: number): CacheLayer | null {
    return this.#cache.layer(layer);
  }

  memory(): (LayerMemory | null)[] {
    const memory: (LayerMemory | null)[] = new Array<LayerMemory | null>(this.#numLayers).fill(null);
    for (const layer of this.#layers) memory[layer.io.layer] = layer.cacheLayer.memory();
    return memory;
  }

  flushCounts(): (number | null)[] {
    const counts: (number | null)[] = new Array<number | null>(this.#numLayers).fill(null);
    for (const layer of this.#layers) counts[layer.io.layer] = layer.cacheLayer.flushCount;
    return counts;
  }

  lastErrors(): (LayerQuantizeError | null)[] {
    const errors: (LayerQuantizeError | null)[] = new Array<LayerQuantizeError | null>(this.#numLayers).fill(null);
    for (const layer of this.#layers) {
      const last = layer.cacheLayer.events[layer.cacheLayer.events.length - 1];
      if (last !== undefined) errors[layer.io.layer] = { layer: layer.io.layer, step: last.step, kind: last.kind, key: last.key, value: last.value };
    }
    return errors;
  }

  references(buffer: ArrayBufferLike): boolean {
    if (this.#cache.references(buffer) || this.#states.references(buffer)) return true;
    // fp32 pasts are views of the cache's buffers (asked anyway, so that a past can never be freed);
    // fp16 pasts between quantize events are the last present outputs themselves.
    for (const layer of this.#layers) {
      for (const side of [layer.key, layer.value]) if (side.past.buffer === buffer || side.pastBits?.buffer === buffer) return true;
    }
    return false;
  }

  dispose(): void {
    this.#cache.dispose();
    for (const layer of this.#layers) {
      for (const side of [layer.key, layer.value]) {
        side.past = new Float32Array(0);
        side.scratch = new Float32Array(0);
        side.pastBits = side.pastBits === null ? null : new Uint16Array(0);
        side.bitsStore = new Uint16Array(0);
      }
      layer.packing.dispose();
    }
    this.#states.dispose();
  }

  #side(dims: KvDims): PastSide {
    return {
      dims,
      past: new Float32Array(0),
      pastBits: this.#fp16 ? new Uint16Array(0) : null,
      bitsStore: new Uint16Array(0),
      scratch: new Float32Array(0),
    };
  }

  #pastTensor(side: PastSide): FloatHostTensor {
    const { kvHeads, headDim } = side.dims;
    if (this.#seq === 0) return emptyPast(this.#fp16 ? 'float16' : 'float32', side.dims);
    const dims = [1, kvHeads, this.#seq, headDim];
    return side.pastBits !== null ? floatTensor('float16', dims, side.pastBits) : floatTensor('float32', dims, side.past);
  }

  /** present's rows [past, past + n) as a float32 `[1, kvHeads, n, headDim]` KvTensor for the cache. */
  #newRows(side: PastSide, present: FloatHostTensor, past: number, rows: number): KvTensor {
    const { kvHeads, headDim } = side.dims;
    const shape = [1, kvHeads, rows, headDim] as const;
    const dtype = this.#fp16 ? 'float16' : 'float32';
    // The prefill's present is all new: hand it over as is (the cache quantizes it and keeps no reference).
    if (past === 0 && present.type === 'float32') return kvTensor(shape, dtype, present.data);
    const count = kvHeads * rows * headDim;
    if (side.scratch.length < count) side.scratch = new Float32Array(Math.max(count, 2 * side.scratch.length));
    const out = side.scratch.subarray(0, count);
    const seq = past + rows;
    if (present.type === 'float32') {
      copySlabRows(present.data, seq, past, out, rows, 0, rows, kvHeads, headDim);
    } else {
      for (let s = 0; s < kvHeads; s++) halfBitsToFloat32Into(present.data, (s * seq + past) * headDim, out, s * rows * headDim, rows * headDim);
    }
    return kvTensor(shape, dtype, out);
  }

  #pastFromUpdate(side: PastSide, returned: KvTensor, present: FloatHostTensor): void {
    if (side.pastBits === null) {
      // A view of the cache's own buffer, valid until the layer's next update, which comes after the next run.
      side.past = returned.data;
      return;
    }
    // What the update returned, [past fed | new], is present itself, as exact binary16 already.
    side.pastBits = present.data as Uint16Array;
  }

  #pastFromStore(layer: LayerBoundary, part: 'key' | 'value'): void {
    const side = layer[part];
    const cacheLayer = layer.cacheLayer;
    if (!(cacheLayer instanceof QuantizedLayer)) {
      throw new GenerationError(`layer ${layer.io.layer} reported a quantize event but is not a quantized layer.`);
    }
    // deq(store) as the layer computed it for the event: a view valid until the layer's next update,
    // which comes after the next run (no second dequantize, no buffer of our own).
    const dequantized = cacheLayer.dequantizedStore(part);
    if (dequantized === null) throw new GenerationError(`layer ${layer.io.layer} has no quantized ${part} store after a quantize event.`);
    this.#pastFromValues(side, dequantized.data);
  }

  /** The next past is `values` (dequantized, a view valid until the layer's next update): as is, or as binary16 bits. */
  #pastFromValues(side: PastSide, values: Float32Array): void {
    if (side.pastBits === null) {
      side.past = values;
      return;
    }
    // fp16 stores dequantize to binary16-exact values (spec §1.3 consequence 6), so this is lossless.
    if (side.bitsStore.length < values.length) side.bitsStore = new Uint16Array(Math.max(values.length, 2 * side.bitsStore.length));
    side.pastBits = side.bitsStore.subarray(0, values.length);
    float32ToHalfBitsInto(values, 0, side.pastBits, 0, values.length);
  }
}
