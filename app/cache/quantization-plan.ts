import type { QuantParams, Quantizer } from '../quant/types.js';
import type { QuantizedCacheSettings } from './cache-config.js';
import type { SideExtensions } from './cache-extensions.js';
import { resolveLayerSides, type SidePlan } from './cache-plan.js';
import { extendedCodec } from './extended-side-codec.js';
import { fullPrecisionCodec } from './full-precision-side.js';
import { backendCodec, type SideCodec } from './side-codec.js';

/** How one side (keys or values) of one quantized layer is quantized. */
export interface SideQuantization {
  readonly params: QuantParams;
  /** null: transformers' path (the backend's quantizer alone); else the extensions' codec */
  readonly extensions: SideExtensions | null;
  /** true: the cache plan keeps this side in full precision while the other is quantized (a kvscope extension); `params` are then the layer's, unused */
  readonly fullPrecision?: true;
}

export interface LayerQuantization {
  readonly key: SideQuantization;
  readonly value: SideQuantization;
}

/**
 * One quantized layer's K and V parameters, as the cache plan (cache-plan.ts) resolves them: without
 * extensions every layer gets transformers' `QuantizedLayer(nbits, axis_key, axis_value,
 * q_group_size)` (spec §1.1). Returns null for a layer the plan keeps in full precision (it gets a
 * dynamic layer instead: layer-plan.ts). A runtime-format side is the WriteOnceLayer's, not this.
 */
export function planLayerQuantization(settings: QuantizedCacheSettings, layer: number, numLayers: number): LayerQuantization | null {
  const sides = resolveLayerSides(settings, layer, numLayers);
  if (sides === null) return null;
  const { groupSize } = settings;
  const side = (plan: SidePlan, axis: number): SideQuantization => {
    if (plan.kind === 'backend') return { params: plan.params, extensions: plan.extensions };
    // A runtime-format side keeps the layer's transformers params for the preflight's views; KvCache builds a WriteOnceLayer.
    return { params: { nbits: settings.nbits, axis, groupSize }, extensions: null, ...(plan.kind === 'full-precision' ? { fullPrecision: true as const } : {}) };
  };
  return { key: side(sides.key, settings.axisKey), value: side(sides.value, settings.axisValue) };
}

/** The codec that stores one side as planned (side-codec.ts). */
export function sideCodec(quantizer: Quantizer, side: SideQuantization): SideCodec {
  if (side.fullPrecision === true) return fullPrecisionCodec();
  return side.extensions === null ? backendCodec(quantizer, side.params) : extendedCodec(quantizer, side.params, side.extensions);
}
