import type { QuantParams, Quantizer } from '../quant/types.js';
import type { QuantizedCacheSettings } from './cache-config.js';
import { layerBits, sideExtensions, type SideExtensions } from './cache-extensions.js';
import { extendedCodec } from './extended-side-codec.js';
import { backendCodec, type SideCodec } from './side-codec.js';

/** How one side (keys or values) of one quantized layer is quantized. */
export interface SideQuantization {
  readonly params: QuantParams;
  /** null: transformers' path (the backend's quantizer alone); else the extensions' codec, even at neutral values */
  readonly extensions: SideExtensions | null;
}

export interface LayerQuantization {
  readonly key: SideQuantization;
  readonly value: SideQuantization;
}

/**
 * The per-layer, per-side quantization plan: the one place where the settings (transformers' nbits,
 * axes and group size, and the kvscope extensions) become each quantized layer's K and V parameters.
 * Without extensions every layer gets transformers' `QuantizedLayer(nbits, axis_key, axis_value,
 * q_group_size)` (spec §1.1). Returns null for a layer the extensions keep in full precision (the
 * cache plan gives it a dynamic layer instead: layer-plan.ts).
 */
export function planLayerQuantization(settings: QuantizedCacheSettings, layer: number, numLayers: number): LayerQuantization | null {
  const bits = layerBits(settings, layer, numLayers);
  if (bits === 'full-precision') return null;
  const { groupSize, extensions } = settings;
  return {
    key: { params: { nbits: bits.key, axis: settings.axisKey, groupSize }, extensions: sideExtensions(extensions, 'key') },
    value: { params: { nbits: bits.value, axis: settings.axisValue, groupSize }, extensions: sideExtensions(extensions, 'value') },
  };
}

/** The codec that stores one side as planned (side-codec.ts). */
export function sideCodec(quantizer: Quantizer, side: SideQuantization): SideCodec {
  return side.extensions === null ? backendCodec(quantizer, side.params) : extendedCodec(quantizer, side.params, side.extensions);
}
