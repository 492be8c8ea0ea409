import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { withSideTargets, type SideTargets } from '../cache/cache-plan.js';

/**
 * kvscope extension (lab): which parts of the cache the quantized cache quantizes, for sensitivity
 * studies (one layer at a time, keys only, values only). transformers' QuantizedCache quantizes every
 * layer's keys and values; `ALL_TARGETS` is that behaviour, and an eval with it takes the plain path.
 * The targets are an input of the cache plan (app/cache/cache-plan.ts: withSideTargets makes them a
 * layer map with full-precision layers and sides), not a lane of their own.
 */
export type KvParts = 'both' | 'key' | 'value';
export const KV_PARTS: readonly KvParts[] = ['both', 'key', 'value'];

export interface LabTargets extends SideTargets {
  /** decoder layers whose cache is quantized (the others keep full precision); null = every layer */
  readonly layers: readonly number[] | null;
  /** which of keys and values are quantized in those layers */
  readonly parts: KvParts;
}

export const ALL_TARGETS: LabTargets = { layers: null, parts: 'both' };

/** Whether the targets are transformers' behaviour (every layer, keys and values). */
export function isAllTargets(targets: LabTargets | undefined): boolean {
  return targets === undefined || (targets.layers === null && targets.parts === 'both');
}

/**
 * The settings the cache is planned and built from: the evaluation's own, with its targets (when any)
 * resolved into the cache plan's layer map. The record keeps the settings and targets as given.
 */
export function targetedQuantization(
  settings: { readonly quantization: QuantizedCacheSettings; readonly targets?: LabTargets | undefined }, numLayers: number,
): QuantizedCacheSettings {
  return isAllTargets(settings.targets) ? settings.quantization : withSideTargets(settings.quantization, settings.targets!, numLayers);
}
