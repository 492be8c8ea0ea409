import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { resolveLayerSides, type SidePlan } from '../cache/cache-plan.js';
import { FlushScratch } from '../cache/flush-scratch.js';
import type { CacheLayerPlan } from '../cache/layer-plan.js';
import { planLayerQuantization } from '../cache/quantization-plan.js';
import type { LayerMemory } from '../cache/layer-memory.js';
import type { KvRows } from '../cache/stored-parts.js';
import type { InGraphKvIo, InGraphLayerIo, InGraphSideIo } from '../onnx/rewrite/in-graph-spec.js';
import { runtimeFormat } from '../quant/runtime-formats/registry.js';
import type { Quantizer } from '../quant/types.js';
import type { KvDtype } from '../tensor/kv-tensor.js';
import type { DecoderIo, KvLayerIo } from './decoder-io.js';
import type { SessionOutputs } from './decoder-session.js';
import { PassThroughKvLane } from './dynamic-kv-lane.js';
import { GenerationError } from './engine-errors.js';
import type { LayerQuantizeError } from './generation-result.js';
import { FormatLayerLane, WideningScratch } from './graph-format-layer.js';
import type { GraphLayerLane } from './graph-layer-lane.js';
import { StoreLayerLane } from './graph-store-layer.js';
import type { HostTensor } from './host-tensor.js';
import type { AbsorbResult, KvLane } from './kv-lane.js';
import { readPresent, type KvDims } from './kv-present.js';
import { copySlabRows } from './slab-rows.js';
import type { FlushMetrics } from './types.js';

export { int32View } from './graph-store-layer.js';

/**
 * The in-graph dequantization lane (`--dequantize graph`): only what the cache stores crosses into
 * ONNX Runtime, and only the new rows come back.
 *
 * The graph was rewritten (app/onnx/rewrite/in-graph-dequantize.ts) so that each quantized layer's past
 * is fed as what its cache layer stores and dequantized inside the graph exactly as the host does; its
 * output is the rows this run adds. Each quantized layer is one of two kinds, as the cache plan
 * (app/cache/cache-plan.ts) resolves its sides: transformers' QuantizedLayer, whose store (packed
 * codes, scale, zero in T) and residual cross (graph-store-layer.ts), or a serving runtime's
 * write-once format, whose bytes cross (graph-format-layer.ts; issue 27, a kvscope extension). No
 * dequantized history lives in JavaScript between steps, and inside ORT only the layer being computed
 * has one (the rewrite's gates). The semantics are CacheKvLane's: what attention sees is the host
 * path's tensor, so logits agree bit for bit (tests: app/node/in-graph-parity,
 * app/node/in-graph-format-generation.test.ts).
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
  /** transformers' backend quantizer; needed where a layer keeps a backend store (a runtime-format layer needs none) */
  readonly quantizer?: Quantizer | undefined;
  readonly dims: ReadonlyMap<number, { readonly key: KvDims; readonly value: KvDims }>;
  /** frees a buffer nothing reads any more (Node: app/node/free-array-buffer.ts): replaced stores go at once */
  readonly releaseBuffer?: (buffer: ArrayBufferLike) => void;
  /** per decoder layer, the window transformers' DynamicSlidingWindowLayer keeps (null: none); for the dynamic layers */
  readonly slidingWindows?: readonly (number | null)[];
  /** keep every row in the residual, never quantized: the full-precision reference on the rewritten graph */
  readonly keepFullPrecision?: boolean;
}

export class GraphKvLane implements KvLane {
  readonly #dtype: KvDtype;
  readonly #layers: GraphLayerLane[];
  /** the plan's dynamic layers and the hybrid states, fed exactly as the pass-through lane feeds them */
  readonly #passThrough: PassThroughKvLane;
  /** the store layers' flush scratch (one layer's history while it flushes) */
  readonly #flushScratch = new FlushScratch();
  #seq = 0;
  /** the past length the last run was fed with: its new-rows outputs hold positions #runStart … */
  #runStart = 0;

  constructor(options: GraphLaneOptions) {
    const { io, kv, plan } = options;
    this.#dtype = io.kvDtype ?? 'float32';
    const rewritten = new Map(kv.layers.map((layer) => [layer.layer, layer]));
    const layerOf = layerLaneFactory(options, this.#dtype, this.#flushScratch);
    const dynamicLayers: KvLayerIo[] = [];
    this.#layers = io.kvLayers.flatMap((layerIo): GraphLayerLane[] => {
      const inGraph = rewritten.get(layerIo.layer);
      if (plan[layerIo.layer] === 'quantized') {
        if (inGraph === undefined) {
          throw new GenerationError(`layer ${layerIo.layer} is quantized but the rewritten graph still takes its past as full-precision tensors.`,
            'Rewrite the graph for these cache settings (the in-graph cache is keyed by them), or run with --dequantize host.');
        }
        return [layerOf(layerIo.layer, inGraph, options.dims.get(layerIo.layer)!)];
      }
      if (plan[layerIo.layer] !== 'dynamic' || inGraph !== undefined) {
        throw new GenerationError(`the cache plan says "${String(plan[layerIo.layer])}" for layer ${layerIo.layer}, which the graph has KV inputs for.`,
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

  /** Feeds what each layer stores as it is (no copy); returns the bytes that cross into the graph. */
  addFeeds(feeds: Record<string, HostTensor>): number {
    this.#runStart = this.#seq;
    let bytes = this.#passThrough.addFeeds(feeds);
    for (const layer of this.#layers) bytes += layer.feed(feeds);
    return bytes;
  }

  absorb(outputs: SessionOutputs, newTokens: number): AbsorbResult {
    const flushes: FlushMetrics[] = [];
    this.#passThrough.absorb(outputs, newTokens);
    const rows = (io: InGraphSideIo, dims: KvDims, n: number): KvRows => this.#rows(outputs, io, dims, n);
    for (const layer of this.#layers) layer.absorb(rows, newTokens, flushes);
    this.#seq += newTokens;
    // The graph dequantizes: nothing is dequantized here for the next feeds (flushes and encoding count as the step's work).
    return { flushes, dequantizeMs: 0 };
  }

  /** Stored bytes per layer; a quantized layer's workingBytes are its own (graph-store-layer.ts, graph-format-layer.ts). */
  memory(): (LayerMemory | null)[] {
    const memory = this.#passThrough.memory();
    for (const layer of this.#layers) memory[layer.layer] = layer.memory();
    return memory;
  }

  flushCounts(): (number | null)[] {
    const counts = this.#passThrough.flushCounts();
    for (const layer of this.#layers) counts[layer.layer] = layer.flushCount;
    return counts;
  }

  lastErrors(): (LayerQuantizeError | null)[] {
    const errors = this.#passThrough.lastErrors();
    for (const layer of this.#layers) {
      const last = layer.lastError();
      if (last !== null) errors[layer.layer] = last;
    }
    return errors;
  }

  /** Quantized layers keep no output (they copy the new rows); dynamic pasts and states are outputs fed back. */
  references(buffer: ArrayBufferLike): boolean {
    return this.#passThrough.references(buffer);
  }

  dispose(): void {
    for (const layer of this.#layers) layer.dispose();
    this.#passThrough.dispose();
    this.#flushScratch.dispose();
  }

  /**
   * This absorb's rows of a side's new-rows output. A run's tokens may reach the cache in several
   * updates (StepRunner: a chunk that ends at a flush step is absorbed as n − 1 tokens, then 1), and
   * the output holds all of the run's rows, positions #runStart …: each update takes the rows from
   * #seq on (a copy when it is not the whole output).
   */
  #rows(outputs: SessionOutputs, io: InGraphSideIo, dims: KvDims, newTokens: number): KvRows {
    const type = this.#dtype === 'float16' ? 'float16' : 'float32';
    const offset = this.#seq - this.#runStart;
    const { kvHeads, headDim } = dims;
    const length = outputs[io.newRows]?.dims[2];
    // Anything but a run that holds these rows is readPresent's to report (missing, wrong dtype or shape).
    const runRows = typeof length === 'number' && offset + newTokens <= length ? length : offset + newTokens;
    const tensor = readPresent(outputs, io.newRows, type, dims, runRows);
    const shape = [1, kvHeads, newTokens, headDim] as const;
    if (runRows === newTokens) return { shape, dtype: this.#dtype, data: tensor.data };
    const data = tensor.data instanceof Float32Array ? new Float32Array(kvHeads * newTokens * headDim) : new Uint16Array(kvHeads * newTokens * headDim);
    copySlabRows(tensor.data, runRows, offset, data, newTokens, 0, newTokens, kvHeads, headDim);
    return { shape, dtype: this.#dtype, data };
  }
}

/**
 * Builds each quantized layer's lane as the cache plan resolves its sides: runtime formats on both
 * sides give a write-once layer, backend sides a store layer; the flush scratch goes with the first
 * store layer, the widening scratch is shared by the format layers.
 */
function layerLaneFactory(options: GraphLaneOptions, dtype: KvDtype, flushScratch: FlushScratch): (layer: number, io: InGraphLayerIo, dims: { key: KvDims; value: KvDims }) => GraphLayerLane {
  const { settings, numLayers } = options;
  const keepFullPrecision = options.keepFullPrecision === true;
  const widening = new WideningScratch();
  let storeLayers = 0;
  return (layer, io, dims) => {
    const sides = resolveLayerSides(settings, layer, numLayers);
    if (sides !== null && (sides.key.kind === 'runtime-format' || sides.value.kind === 'runtime-format')) {
      const format = (side: SidePlan, part: string) => {
        if (side.kind !== 'runtime-format') {
          throw new GenerationError(`layer ${layer}'s ${part} are not in a runtime format while its other side is; the graph path decodes a write-once layer's two formats only.`, 'Run with --dequantize host.');
        }
        return runtimeFormat(side.format);
      };
      return new FormatLayerLane({
        layer, io, dims, dtype, key: format(sides.key, 'keys'), value: format(sides.value, 'values'),
        calculateKvScales: settings.extensions?.calculateKvScales === true, scratch: widening, keepFullPrecision,
      });
    }
    // K and V parameters as the host path's cache plans them (app/cache/quantization-plan.ts)
    const quantization = planLayerQuantization(settings, layer, numLayers);
    if (quantization === null) {
      throw new GenerationError(`layer ${layer} is quantized but the rewritten graph still takes its past as full-precision tensors.`,
        'Rewrite the graph for these cache settings (the in-graph cache is keyed by them), or run with --dequantize host.');
    }
    if (options.quantizer === undefined) throw new GenerationError(`layer ${layer} keeps a ${settings.backend} store, and the graph lane was given no quantizer.`, 'Run this cache with --dequantize host.');
    return new StoreLayerLane({
      layer, io, dims, dtype, quantizer: options.quantizer, quantization, residualLength: settings.residualLength,
      scratch: flushScratch, reportsScratch: storeLayers++ === 0, keepFullPrecision, releaseBuffer: options.releaseBuffer,
    });
  };
}
