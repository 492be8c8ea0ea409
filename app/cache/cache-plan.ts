import type { QuantParams } from '../quant/types.js';
import type { QuantizedCacheSettings } from './cache-config.js';
import { layerBits, layerFormats, sideExtensions, type LayerMapEntry, type SideExtensions } from './cache-extensions.js';
import { planCacheLayers, planDynamicLayers, type CacheLayerPlan, type PlannedLayer } from './layer-plan.js';

/**
 * How one side (keys or values) of one decoder layer is cached:
 * - `backend`: transformers' QuantizedLayer side (the backend's quantizer with these params, flushed
 *   every residual_length tokens), with the kvscope extensions' sink/rotation/outliers where set;
 * - `runtime-format`: a serving runtime's write-once format (--kv-format, write-once-layer.ts);
 * - `full-precision`: the side's rows kept as the graph produced them.
 */
export type SidePlan =
  | { readonly kind: 'full-precision' }
  | {
    readonly kind: 'backend';
    readonly backend: string;
    readonly params: QuantParams;
    readonly residualLength: number;
    /** null: transformers' path (the backend alone); else the extensions' codec (extended-side-codec.ts), bit for bit the backend's at neutral values */
    readonly extensions: SideExtensions | null;
  }
  | { readonly kind: 'runtime-format'; readonly format: string; readonly calculateKvScales: boolean };

/** One decoder layer in the cache plan: its cache layer kind and what each side stores. */
export interface LayerCachePlan {
  readonly layer: number;
  /** quantized (a QuantizedLayer or a WriteOnceLayer), dynamic (full precision) or none (no KV state) */
  readonly cache: CacheLayerPlan;
  readonly key: SidePlan;
  readonly value: SidePlan;
}

/** One entry per decoder layer, in layer order. */
export type CachePlan = readonly LayerCachePlan[];

const FULL: SidePlan = { kind: 'full-precision' };

/**
 * The cache plan: the one resolver from every input to each layer's K and V. Its inputs all arrive
 * as settings: transformers' QuantizedCache arguments (the default: every layer, both sides, the
 * backend's nbits/axes/group size), the layer policy, and the kvscope extensions (`--nbits-key/value`,
 * the KVTuner layer map with `full` layers or sides, `--full-precision-first/last`, `--kv-format*`);
 * the lab's `--quantize-layers/--quantize-parts` become a layer map first (withSideTargets). `null`
 * settings: a dynamic (full-precision) run. The preflight, the engine's lanes, the strip and the
 * record all read this (planCacheLayers and planLayerQuantization are its per-layer views).
 */
export function resolveCachePlan(layers: readonly PlannedLayer[], settings: QuantizedCacheSettings | null): CachePlan {
  const kinds = settings === null ? planDynamicLayers(layers) : planCacheLayers(layers, settings.layerPolicy, settings);
  return kinds.map((cache, layer): LayerCachePlan => {
    if (cache !== 'quantized' || settings === null) return { layer, cache, key: FULL, value: FULL };
    const sides = resolveLayerSides(settings, layer, layers.length);
    return sides === null ? { layer, cache: 'dynamic', key: FULL, value: FULL } : { layer, cache, ...sides };
  });
}

/** One quantized layer's K and V plans; null where the settings keep the whole layer in full precision. */
export function resolveLayerSides(settings: QuantizedCacheSettings, layer: number, numLayers: number): { key: SidePlan; value: SidePlan } | null {
  const bits = layerBits(settings, layer, numLayers);
  if (bits === 'full-precision') return null;
  const ext = settings.extensions;
  const formats = layerFormats(settings, layer);
  const side = (part: 'key' | 'value'): SidePlan => {
    const nbits = part === 'key' ? bits.key : bits.value;
    if (nbits === 'full') return FULL;
    // the layer map's format for this layer and side, else --kv-format*
    const format = formats[part];
    if (format !== undefined) return { kind: 'runtime-format', format, calculateKvScales: ext?.calculateKvScales === true };
    return {
      kind: 'backend', backend: settings.backend, residualLength: settings.residualLength,
      params: { nbits, axis: part === 'key' ? settings.axisKey : settings.axisValue, groupSize: settings.groupSize },
      extensions: sideExtensions(ext, part),
    };
  };
  return { key: side('key'), value: side('value') };
}

/** Whether a side is stored quantized (by the backend or a runtime format). */
export function isQuantizedSide(side: SidePlan): boolean {
  return side.kind !== 'full-precision';
}

/** Which sides the plan quantizes in `layer` (what an evaluation reports errors for). */
export function quantizedSidesOf(plan: CachePlan, layer: number): { key: boolean; value: boolean } {
  const entry = plan[layer];
  if (entry === undefined || entry.cache !== 'quantized') return { key: false, value: false };
  return { key: isQuantizedSide(entry.key), value: isQuantizedSide(entry.value) };
}

/** The layers the plan keeps wholly in full precision although they hold a KV cache (what the model panel's strip marks). */
export function fullPrecisionLayersOf(plan: CachePlan): number[] {
  return plan.filter((entry) => entry.cache === 'dynamic').map((entry) => entry.layer);
}

/**
 * The lab's sensitivity targets (a kvscope extension): quantize only `layers` (null: every layer)
 * and in them only keys, only values or both. kvscope's transformers-path settings are left as they
 * are; the targets become a complete layer map: each targeted layer keeps its resolved bits on the
 * targeted sides and `full` on the other, every other layer `full`. A runtime format (--kv-format)
 * keeps applying to the quantized sides.
 */
export interface SideTargets {
  readonly layers: readonly number[] | null;
  readonly parts: 'both' | 'key' | 'value';
}

export function withSideTargets(settings: QuantizedCacheSettings, targets: SideTargets, numLayers: number): QuantizedCacheSettings {
  const chosen = targets.layers === null ? null : new Set(targets.layers);
  const defaultKey = settings.extensions?.nbitsKey ?? settings.nbits;
  const defaultValue = settings.extensions?.nbitsValue ?? settings.nbits;
  const layerMap = Array.from({ length: numLayers }, (_, layer): LayerMapEntry | null => {
    const bits = layerBits(settings, layer, numLayers);
    if (bits === 'full-precision' || (chosen !== null && !chosen.has(layer))) return { layer, fullPrecision: true };
    const entry = { layer, nbitsKey: targets.parts === 'value' ? 'full' : bits.key, nbitsValue: targets.parts === 'key' ? 'full' : bits.value } as const;
    // A layer at the global bits needs no entry (so that a runtime format's map names full layers and sides only).
    return entry.nbitsKey === defaultKey && entry.nbitsValue === defaultValue ? null : entry;
  }).filter((entry): entry is LayerMapEntry => entry !== null);
  // The shorthands are already in the map as full layers; dropped so that the map alone says it.
  const { fullPrecisionFirstLayers: _first, fullPrecisionLastLayers: _last, layerMap: _map, ...extensions } = settings.extensions ?? {};
  return { ...settings, extensions: { ...extensions, ...(layerMap.length > 0 ? { layerMap } : {}) } };
}
