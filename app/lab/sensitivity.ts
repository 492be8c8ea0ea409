import { RUNTIMES_PRESET_POINTS } from './runtime-preset.js';
import type { SweepValue } from './sweep-spec.js';

/**
 * The lab's sensitivity presets, as sweep points over the lab targets (lab-targets.ts, a kvscope
 * extension):
 * - `layers`: one layer quantized at a time (the others at full precision), keys only, values only
 *   and both, for every layer: which layer, and which side of it, the cache cannot afford to squeeze;
 * - `kv`: keys only against values only against both, over every layer at once.
 * Crossed with the spec's grid (say nbits 2 and 4), they make the Lab view's layer × K/V heatmap.
 * - `runtimes`: the serving runtimes' KV formats next to transformers' 4-bit caches (runtime-preset.ts).
 */
export const SENSITIVITY_PRESETS = ['layers', 'kv', 'runtimes'] as const;
export type SensitivityPreset = (typeof SENSITIVITY_PRESETS)[number];

const PARTS = ['key', 'value', 'both'] as const;

export function sensitivityPoints(preset: SensitivityPreset, layerCount: number): Record<string, SweepValue>[] {
  if (preset === 'kv') return PARTS.map((parts) => ({ 'quantize-parts': parts }));
  if (preset === 'runtimes') return RUNTIMES_PRESET_POINTS.map((point) => ({ ...point }));
  const points: Record<string, SweepValue>[] = [];
  for (let layer = 0; layer < layerCount; layer++) {
    for (const parts of PARTS) points.push({ 'quantize-layers': String(layer), 'quantize-parts': parts });
  }
  return points;
}
