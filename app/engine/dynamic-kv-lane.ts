import { EMPTY_LAYER_MEMORY, layerMemory, type LayerMemory } from '../cache/layer-memory.js';
import { slidingWindowMemory } from '../cache/sliding-window-layer.js';
import type { KvDtype } from '../tensor/kv-tensor.js';
import type { DecoderIo, KvLayerIo } from './decoder-io.js';
import type { SessionOutputs } from './decoder-session.js';
import type { LayerQuantizeError } from './generation-result.js';
import { floatTensor, type FloatHostTensor, type HostTensor } from './host-tensor.js';
import type { KvDims } from './kv-present.js';
import type { AbsorbResult, KvLane } from './kv-lane.js';
import { LayerKvPacking } from './kv-packing.js';
import { StateFeeds } from './state-feeds.js';

interface LayerPair {
  readonly io: KvLayerIo;
  readonly keyDims: KvDims;
  readonly valueDims: KvDims;
  readonly packing: LayerKvPacking;
  key: FloatHostTensor;
  value: FloatHostTensor;
}

export interface PassThroughLaneOptions {
  readonly io: DecoderIo;
  readonly numLayers: number;
  /** per KV layer: heads and head sizes of its keys and values */
  readonly dims: ReadonlyMap<number, { readonly key: KvDims; readonly value: KvDims }>;
  /** per decoder layer, the window transformers' DynamicSlidingWindowLayer keeps (null: none) */
  readonly slidingWindows?: readonly (number | null)[];
}

const NO_FLUSHES: AbsorbResult = { flushes: [], dequantizeMs: 0 };

/**
 * transformers' DynamicCache for an ONNX graph that concatenates internally: its `present.*` is
 * exactly `DynamicLayer.update`'s return, `cat(past, new)`, so the next step's past is the present
 * tensor itself, fed back without a copy (as the minimal onnxruntime loop does:
 * ../shared/reference/generation-speed.md). Nothing is copied through JavaScript per step; the
 * previous step's tensors are dropped as soon as the new ones arrive. A GPT-2 combined present is fed
 * back whole (kv-packing.ts), so that packing costs no copy either.
 */
export class PassThroughKvLane implements KvLane {
  readonly #dtype: KvDtype;
  readonly #numLayers: number;
  readonly #layers: LayerPair[];
  readonly #states: StateFeeds;
  readonly #windows: readonly (number | null)[];
  #seq = 0;

  constructor(options: PassThroughLaneOptions) {
    const { io } = options;
    this.#windows = options.slidingWindows ?? [];
    this.#dtype = io.kvDtype ?? 'float32';
    this.#numLayers = options.numLayers;
    this.#layers = io.kvLayers.map((layerIo) => {
      const dims = options.dims.get(layerIo.layer)!;
      return {
        io: layerIo, keyDims: dims.key, valueDims: dims.value, packing: new LayerKvPacking(layerIo, dims, io.presentMayExceedValidLength),
        key: emptyPast(layerIo.dtype, dims.key), value: emptyPast(layerIo.dtype, dims.value),
      };
    });
    this.#states = new StateFeeds(io.states);
  }

  get seqLength(): number {
    return this.#seq;
  }

  addFeeds(feeds: Record<string, HostTensor>): number {
    let bytes = 0;
    for (const layer of this.#layers) bytes += layer.packing.feed(feeds, layer.key, layer.value);
    this.#states.addFeeds(feeds);
    return bytes;
  }

  absorb(outputs: SessionOutputs, newTokens: number): AbsorbResult {
    const seq = this.#seq + newTokens;
    for (const layer of this.#layers) {
      const present = layer.packing.read(outputs, seq);
      layer.key = present.key;
      layer.value = present.value;
    }
    this.#states.absorb(outputs);
    this.#seq = seq;
    return NO_FLUSHES;
  }

  memory(): (LayerMemory | null)[] {
    const memory: (LayerMemory | null)[] = new Array<LayerMemory | null>(this.#numLayers).fill(null);
    for (const layer of this.#layers) {
      const full = this.#seq === 0 ? EMPTY_LAYER_MEMORY : layerMemory({
        geometry: {
          key: { batch: 1, kvHeads: layer.keyDims.kvHeads, headDim: layer.keyDims.headDim, dtype: this.#dtype },
          value: { batch: 1, kvHeads: layer.valueDims.kvHeads, headDim: layer.valueDims.headDim, dtype: this.#dtype },
        },
        quantizedTokens: 0,
        fullPrecisionTokens: this.#seq,
        stores: [],
        workingBytes: layer.key.data.byteLength + layer.value.data.byteLength,
      });
      // transformers' DynamicCache keeps a sliding layer's last window − 1 tokens; the graph is fed them all
      const window = this.#windows[layer.io.layer] ?? null;
      memory[layer.io.layer] = window === null ? full : slidingWindowMemory(full, window);
    }
    return memory;
  }

  flushCounts(): (number | null)[] {
    const counts: (number | null)[] = new Array<number | null>(this.#numLayers).fill(null);
    for (const layer of this.#layers) counts[layer.io.layer] = 0;
    return counts;
  }

  lastErrors(): (LayerQuantizeError | null)[] {
    return new Array<LayerQuantizeError | null>(this.#numLayers).fill(null);
  }

  references(buffer: ArrayBufferLike): boolean {
    for (const layer of this.#layers) if (layer.key.data.buffer === buffer || layer.value.data.buffer === buffer) return true;
    return this.#states.references(buffer);
  }

  dispose(): void {
    for (const layer of this.#layers) {
      layer.key = emptyPast(layer.io.dtype, layer.keyDims);
      layer.value = emptyPast(layer.io.dtype, layer.valueDims);
      layer.packing.dispose();
    }
    this.#states.dispose();
    this.#seq = 0;
  }
}

/** The first step's past: `[1, kvHeads, 0, headDim]` (stories260k README: "pass empty past tensors"). */
export function emptyPast(dtype: KvDtype, dims: KvDims): FloatHostTensor {
  return floatTensor(dtype, [1, dims.kvHeads, 0, dims.headDim], dtype === 'float32' ? new Float32Array(0) : new Uint16Array(0));
}
