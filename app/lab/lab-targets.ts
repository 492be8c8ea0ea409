/**
 * kvscope extension (lab): which parts of the cache the quantized cache quantizes, for sensitivity
 * studies (one layer at a time, keys only, values only). transformers' QuantizedCache quantizes every
 * layer's keys and values; `ALL_TARGETS` is that behaviour, and an eval with it takes the plain path.
 */
export type KvParts = 'both' | 'key' | 'value';
export const KV_PARTS: readonly KvParts[] = ['both', 'key', 'value'];

export interface LabTargets {
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
