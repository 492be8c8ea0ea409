import { CacheError } from '../errors.js';
import type { Quantizer } from '../quant/types.js';
import type { KvTensor } from '../tensor/kv-tensor.js';
import type { QuantizedCacheSettings } from './cache-config.js';
import type { CacheLayer, KvConcatenation, KvPair } from './cache-layer.js';
import { DynamicLayer } from './dynamic-layer.js';
import { extensionProblems } from './extension-problems.js';
import type { CacheLayerPlan } from './layer-plan.js';
import { QuantizedLayer } from './quantized-layer.js';
import { planLayerQuantization } from './quantization-plan.js';
import { SlidingWindowLayer } from './sliding-window-layer.js';
import { WriteOnceLayer } from './write-once-layer.js';
import { runtimeFormat } from '../quant/runtime-formats/registry.js';
import type { RuntimeFormat } from '../quant/runtime-formats/types.js';
import { layerUsesRuntimeFormat } from './cache-extensions.js';
import { resolveLayerSides, type SidePlan } from './cache-plan.js';

export interface KvCacheOptions {
  /** one entry per decoder layer (see `planCacheLayers`) */
  readonly plan: readonly CacheLayerPlan[];
  readonly settings: QuantizedCacheSettings;
  /** the backend named in `settings`; required when the plan quantizes any layer */
  readonly quantizer?: Quantizer;
  /**
   * Per decoder layer, the window of a layer transformers keeps in a DynamicSlidingWindowLayer (null
   * otherwise; see slidingWindows()): a full-precision layer with one is a SlidingWindowLayer.
   */
  readonly slidingWindows?: readonly (number | null)[];
}

/**
 * The cache of a whole model: one `QuantizedLayer`, `DynamicLayer` or nothing per decoder layer, as
 * the plan says. transformers' `QuantizedCache` builds `num_hidden_layers` quantized layers (spec §1.2);
 * a `full-attention-only` plan extends that to hybrid models.
 */
export class KvCache {
  /** null where the plan is 'none' */
  readonly #layers: readonly (CacheLayer | null)[];
  #disposed = false;

  constructor(options: KvCacheOptions) {
    const { plan, settings, quantizer } = options;
    // The extensions' one validation (the preflight reports the same problems before a run starts).
    const problem = extensionProblems(settings, { numLayers: plan.length }).find((item) => item.severity === 'error');
    if (problem !== undefined) throw new CacheError(`${problem.message} ${problem.fix}`);
    this.#layers = plan.map((kind, index) => {
      switch (kind) {
        case 'quantized':
          // A runtime's write-once format replaces transformers' store, residual and flushes (issue 27).
          // Chosen per layer: --kv-format for every layer, or the layer map's format_key/format_value for some.
          if (layerUsesRuntimeFormat(settings, index)) return writeOnceLayerOf(settings, index, plan.length);
          if (quantizer === undefined) {
            throw new CacheError(`the plan quantizes layer ${index} but no quantizer was given; pass the \`${settings.backend}\` quantizer.`);
          }
          return settings.extensions === undefined
            ? new QuantizedLayer(quantizer, settings)
            : new QuantizedLayer(quantizer, settings, quantizationOf(settings, index, plan.length));
        case 'dynamic': {
          const window = options.slidingWindows?.[index] ?? null;
          return window === null ? new DynamicLayer() : new SlidingWindowLayer(window);
        }
        case 'none': return null;
        default: throw new CacheError(`unknown cache layer plan "${String(kind)}" for layer ${index}; expected quantized, dynamic or none.`);
      }
    });
  }

  get layerCount(): number {
    return this.#layers.length;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** The plan's layer, for inspection (e.g. a `QuantizedLayer`'s stores); null for a 'none' layer. */
  layer(layerIndex: number): CacheLayer | null {
    this.#checkIndex(layerIndex);
    return this.#layers[layerIndex]!;
  }

  /** `concatenated`: what the update will return, computed by the caller (see KvConcatenation); optional */
  update(layerIndex: number, key: KvTensor, value: KvTensor, concatenated?: KvConcatenation): KvPair {
    if (this.#disposed) throw new CacheError('This KvCache was disposed; create a new cache to generate again.');
    const layer = this.layer(layerIndex);
    if (layer === null) {
      throw new CacheError(`layer ${layerIndex} keeps no KV cache (plan "none": a conv or linear-attention layer); do not update it.`);
    }
    return layer.update(key, value, concatenated);
  }

  /**
   * `get_seq_length(layer_idx)`. Without an index: the first layer that keeps a KV cache (transformers'
   * default is layer 0, which in hybrid models may have none); 0 when no layer does.
   */
  seqLength(layerIndex?: number): number {
    if (layerIndex === undefined) return this.#layers.find((layer) => layer !== null)?.seqLength() ?? 0;
    const layer = this.layer(layerIndex);
    if (layer === null) throw new CacheError(`layer ${layerIndex} keeps no KV cache (plan "none"), so it has no sequence length.`);
    return layer.seqLength();
  }

  /** Whether any layer still reads `buffer` (CacheLayer.references). */
  references(buffer: ArrayBufferLike): boolean {
    return this.#layers.some((layer) => layer?.references(buffer) === true);
  }

  dispose(): void {
    for (const layer of this.#layers) layer?.dispose();
    this.#disposed = true;
  }

  #checkIndex(layerIndex: number): void {
    if (!Number.isInteger(layerIndex) || layerIndex < 0 || layerIndex >= this.#layers.length) {
      throw new CacheError(`layer index ${layerIndex} is out of range: this cache has layers 0…${this.#layers.length - 1}.`);
    }
  }
}

/** A runtime-format layer as the cache plan resolves its sides (a `full` side keeps its rows in full precision). */
function writeOnceLayerOf(settings: QuantizedCacheSettings, index: number, numLayers: number): WriteOnceLayer {
  const sides = resolveLayerSides(settings, index, numLayers);
  if (sides === null) throw new CacheError(`the plan quantizes layer ${index}, but the kvscope extensions keep it in full precision; build the plan with planCacheLayers(…, settings).`);
  const format = (side: SidePlan): RuntimeFormat | null => (side.kind === 'runtime-format' ? runtimeFormat(side.format) : null);
  return new WriteOnceLayer(format(sides.key), format(sides.value), { calculateKvScales: settings.extensions?.calculateKvScales === true });
}

/** A quantized layer's plan under the kvscope extensions (quantization-plan.ts); the layer plan made it quantized. */
function quantizationOf(settings: QuantizedCacheSettings, index: number, numLayers: number) {
  const quantization = planLayerQuantization(settings, index, numLayers);
  if (quantization === null) {
    throw new CacheError(`the plan quantizes layer ${index}, but the kvscope extensions keep it in full precision; build the plan with planCacheLayers(…, settings).`);
  }
  return quantization;
}
