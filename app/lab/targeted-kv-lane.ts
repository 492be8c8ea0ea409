import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { layerMemory, type LayerMemory } from '../cache/layer-memory.js';
import { QuantizedLayer } from '../cache/quantized-layer.js';
import { WriteOnceLayer } from '../cache/write-once-layer.js';
import type { ModelConfig } from '../config/model-config.js';
import { quantizedByteSize } from '../quant/types.js';
import { bytesPerElement } from '../tensor/kv-tensor.js';
import { CacheKvLane } from '../engine/cache-kv-lane.js';
import type { DecoderIo, KvLayerIo } from '../engine/decoder-io.js';
import type { SessionOutputs } from '../engine/decoder-session.js';
import { PassThroughKvLane } from '../engine/dynamic-kv-lane.js';
import type { LayerQuantizeError } from '../engine/generation-result.js';
import { floatTensor, type FloatHostTensor, type HostTensor } from '../engine/host-tensor.js';
import type { AbsorbResult, KvLane } from '../engine/kv-lane.js';
import type { RunCachePlan } from '../engine/plan-run-cache.js';
import { kvDims, passThroughLaneOptions } from '../engine/run-lane.js';
import { copySlabRows } from '../engine/slab-rows.js';
import { EvalInputError } from './lab-errors.js';
import type { LabTargets } from './lab-targets.js';

export interface TargetedLaneOptions {
  readonly io: DecoderIo;
  readonly config: ModelConfig;
  readonly quantization: QuantizedCacheSettings;
  readonly cachePlan: RunCachePlan;
  readonly targets: LabTargets;
  readonly now: () => number;
}

interface Target {
  readonly io: KvLayerIo;
  readonly key: boolean;
  readonly value: boolean;
}

/**
 * kvscope extension (lab, sensitivity): a cache that quantizes only some layers, and in them only
 * keys, only values or both; everything else stays at full precision, as transformers' DynamicCache
 * keeps it. Two lanes side by side:
 * - an exact lane (the pass-through lane, every layer): what the graph is fed wherever nothing is quantized;
 * - a KvCache lane over the target layers only (the run's lane, same settings, same flushes), whose
 *   past replaces the exact one on the quantized sides.
 * The cache lane must see, on a side it does not feed, the present it would have produced itself,
 * `[its own past | new rows]` (its update and its concatenation check expect that), so absorb builds
 * that tensor from the past it offered and the run's new rows. A side kept at full precision is
 * requantized by the cache lane like any other (wasted work, never fed), so the quantized side's flush
 * schedule is exactly the run's. Memory counts the quantized side's codes, scale/zero and residual
 * and the other side's full history at full precision.
 */
export class TargetedKvLane implements KvLane {
  readonly #exact: PassThroughKvLane;
  readonly #cache: CacheKvLane;
  readonly #targets: readonly Target[];
  readonly #numLayers: number;
  readonly #kvLayers: readonly KvLayerIo[];
  readonly #dims: ReturnType<typeof kvDims>;
  /** what the cache lane offered for the current run, by input name, and the past length then */
  #offered: Record<string, HostTensor> = {};
  #offeredPast = 0;

  constructor(options: TargetedLaneOptions) {
    const { io, config, cachePlan, targets } = options;
    const plan = cachePlan.plan;
    if (plan === null) throw new EvalInputError('lab targets need a quantized cache; drop them or use --cache quantized.');
    const numLayers = config.geometry.numLayers;
    const chosen = targets.layers ?? io.kvLayers.map((layer) => layer.layer);
    for (const layer of chosen) {
      if (!Number.isInteger(layer) || layer < 0 || layer >= numLayers) {
        throw new EvalInputError(`--quantize-layers names layer ${layer}, but the model has layers 0…${numLayers - 1}.`);
      }
      if (!io.kvLayers.some((kv) => kv.layer === layer)) {
        throw new EvalInputError(`--quantize-layers names layer ${layer}, which keeps no KV cache in this graph.`, 'Choose layers with past_key_values inputs.');
      }
    }
    const layerSet = new Set(chosen);
    const targetIo = io.kvLayers.filter((kv) => layerSet.has(kv.layer));
    // One side alone would need the other side's exact rows joined into the same past_N tensor, and its
    // present split back: not built, so said here rather than fed both sides quantized.
    if (targets.parts !== 'both' && targetIo.some((kv) => kv.packing === 'combined')) {
      throw new EvalInputError(
        `--quantize-parts ${targets.parts} cannot be evaluated on this graph: it packs keys and values of a layer in one tensor (${targetIo.find((kv) => kv.packing === 'combined')!.pastKey}, GPT-2's combined past), which kvscope feeds whole.`,
        'Use --quantize-parts both (with --quantize-layers to choose layers), or a graph with per-layer past_key_values.N.key/value inputs.');
    }
    this.#targets = targetIo.map((kv) => ({ io: kv, key: targets.parts !== 'value', value: targets.parts !== 'key' }));
    this.#numLayers = numLayers;
    this.#kvLayers = io.kvLayers;
    this.#dims = kvDims(io, config);
    const laneOptions = passThroughLaneOptions(io, config);
    this.#exact = new PassThroughKvLane(laneOptions);
    const subIo: DecoderIo = { ...io, kvLayers: targetIo, states: [] };
    this.#cache = new CacheKvLane({
      io: subIo, numLayers, dims: this.#dims, settings: options.quantization, now: options.now, slidingWindows: laneOptions.slidingWindows,
      plan: plan.map((kind, layer) => (layerSet.has(layer) ? kind : 'none')),
      ...(cachePlan.quantizer === undefined ? {} : { quantizer: cachePlan.quantizer }),
    });
  }

  get seqLength(): number {
    return this.#exact.seqLength;
  }

  addFeeds(feeds: Record<string, HostTensor>): number {
    this.#exact.addFeeds(feeds);
    const offered: Record<string, HostTensor> = {};
    this.#cache.addFeeds(offered);
    for (const target of this.#targets) {
      if (target.key) feeds[target.io.pastKey] = offered[target.io.pastKey]!;
      if (target.value) feeds[target.io.pastValue] = offered[target.io.pastValue]!;
    }
    this.#offered = offered;
    this.#offeredPast = this.#exact.seqLength;
    let bytes = 0;
    // A combined layer feeds one past_N for both sides: counted once.
    for (const name of new Set(this.#kvLayers.flatMap((layer) => [layer.pastKey, layer.pastValue]))) bytes += feeds[name]!.data.byteLength;
    return bytes;
  }

  absorb(outputs: SessionOutputs, newTokens: number): AbsorbResult {
    const own: Record<string, HostTensor> = { ...outputs };
    for (const target of this.#targets) {
      if (!target.key) own[target.io.presentKey] = this.#ownPresent(outputs, target.io.pastKey, target.io.presentKey);
      if (!target.value) own[target.io.presentValue] = this.#ownPresent(outputs, target.io.pastValue, target.io.presentValue);
    }
    const result = this.#cache.absorb(own, newTokens);
    this.#exact.absorb(outputs, newTokens);
    return result;
  }

  memory(): (LayerMemory | null)[] {
    const memory = this.#exact.memory();
    const quantized = this.#cache.memory();
    for (const target of this.#targets) {
      const layer = target.io.layer;
      memory[layer] = target.key && target.value ? quantized[layer] ?? null : this.#oneSideMemory(target, quantized[layer] ?? null);
    }
    return memory;
  }

  flushCounts(): (number | null)[] {
    const counts = this.#exact.flushCounts();
    const quantized = this.#cache.flushCounts();
    for (const target of this.#targets) counts[target.io.layer] = quantized[target.io.layer] ?? null;
    return counts;
  }

  lastErrors(): (LayerQuantizeError | null)[] {
    const errors = new Array<LayerQuantizeError | null>(this.#numLayers).fill(null);
    const quantized = this.#cache.lastErrors();
    for (const target of this.#targets) errors[target.io.layer] = quantized[target.io.layer] ?? null;
    return errors;
  }

  references(buffer: ArrayBufferLike): boolean {
    return this.#exact.references(buffer) || this.#cache.references(buffer);
  }

  dispose(): void {
    this.#exact.dispose();
    this.#cache.dispose();
    this.#offered = {};
  }

  /**
   * `[the past the cache lane offered | the run's new rows]`, cut to the present's length (a present
   * cut for the first of several updates is shorter): what the graph would have returned had it been fed that past.
   */
  #ownPresent(outputs: SessionOutputs, pastName: string, presentName: string): HostTensor {
    const present = outputs[presentName];
    const past = this.#offered[pastName];
    if (present === undefined || past === undefined || (present.type !== 'float32' && present.type !== 'float16') || past.type !== present.type) return present as HostTensor;
    const [batch, heads, seq, width] = present.dims as [number, number, number, number];
    const pastSeq = this.#offeredPast;
    const slabs = batch * heads;
    const data = present.type === 'float32' ? new Float32Array(present.data.length) : new Uint16Array(present.data.length);
    copySlabRows(past.data as typeof data, pastSeq, 0, data, seq, 0, pastSeq, slabs, width);
    copySlabRows(present.data as typeof data, seq, pastSeq, data, seq, pastSeq, seq - pastSeq, slabs, width);
    return floatTensor(present.type, present.dims, data) as FloatHostTensor;
  }

  /** Keys quantized and values exact (or the reverse): the quantized side's store and residual, the other side's whole history. */
  #oneSideMemory(target: Target, both: LayerMemory | null): LayerMemory | null {
    if (both === null) return null;
    const cacheLayer = this.#cache.cacheLayer(target.io.layer);
    const stores = cacheLayer instanceof QuantizedLayer ? cacheLayer.stores : { key: null, value: null };
    const store = target.key ? stores.key : stores.value;
    const { key, value } = this.#dims.get(target.io.layer)!;
    const dims = { heads: key.kvHeads, key: key.headDim, value: value.headDim };
    const elementBytes = bytesPerElement(target.io.dtype);
    const quantizedWidth = target.key ? dims.key : dims.value;
    const exactWidth = target.key ? dims.value : dims.key;
    const heads = dims.heads;
    // A runtime format's layer (--kv-format) counts each side's bytes as the runtime does.
    const written = cacheLayer instanceof WriteOnceLayer ? cacheLayer.sideMemory(target.key ? 'key' : 'value') : null;
    const storeBytes = written !== null ? written.codeBytes + written.metadataBytes : store === null ? 0 : quantizedByteSize(store);
    const codeBytes = written !== null ? written.codeBytes : store === null ? 0 : store.packed.byteLength;
    const fullPrecisionBytes = heads * (quantizedWidth * both.fullPrecisionTokens + exactWidth * both.tokens) * elementBytes;
    const memory = layerMemory({
      geometry: {
        key: { batch: 1, kvHeads: heads, headDim: dims.key, dtype: target.io.dtype },
        value: { batch: 1, kvHeads: heads, headDim: dims.value, dtype: target.io.dtype },
      },
      quantizedTokens: both.quantizedTokens, fullPrecisionTokens: both.fullPrecisionTokens, stores: [], workingBytes: both.workingBytes,
    });
    return {
      ...memory,
      codeBytes,
      metadataBytes: storeBytes - codeBytes,
      fullPrecisionBytes,
      totalBytes: storeBytes + fullPrecisionBytes,
    };
  }
}
