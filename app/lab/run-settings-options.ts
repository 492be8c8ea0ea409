import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { formatLayerMap } from '../cache/layer-map.js';
import type { RunSettings } from '../engine/types.js';
import type { SweepValue } from './sweep-spec.js';

/**
 * A run's cache settings as `kvscope eval`'s options, the keys of a sweep spec: how a sweep the Lab
 * sends as typed settings (lab-sweep-spec.ts) is written into its sweep folder, named, tabled and
 * read back by eval's own parser for each point, as a spec file's options are. The one place typed
 * settings become options; run-settings-options.test.ts reads every field back through eval's
 * parser, so a field this forgets fails there rather than dropping out of a sweep.
 */

/** The quantized cache's own fields, by the option that sets each (the Lab's sweepable fields). */
export const QUANTIZATION_OPTIONS = {
  backend: 'backend', nbits: 'nbits', groupSize: 'group-size', residualLength: 'residual-length', axisKey: 'axis-key', axisValue: 'axis-value',
} as const satisfies Partial<Record<keyof QuantizedCacheSettings, string>>;

export type QuantizationField = keyof typeof QUANTIZATION_OPTIONS;
export const QUANTIZATION_FIELDS = Object.keys(QUANTIZATION_OPTIONS) as QuantizationField[];

/**
 * Whether a runtime's KV format replaces transformers' QuantizedCache (`--kv-format`): its backend
 * fields are then not options at all (eval refuses them beside a format, the format ignores them).
 */
export function hasRuntimeFormat(quantization: QuantizedCacheSettings): boolean {
  return quantization.extensions?.kvFormatKey !== undefined || quantization.extensions?.kvFormatValue !== undefined;
}

/** backend, nbits, group size, residual length and axes as options; none under a runtime format. */
export function quantizationOptions(quantization: QuantizedCacheSettings): Record<string, SweepValue> {
  if (hasRuntimeFormat(quantization)) return {};
  return Object.fromEntries(QUANTIZATION_FIELDS.map((field) => [QUANTIZATION_OPTIONS[field], quantization[field]]));
}

/**
 * What else a quantized run sets beyond those fields: a layer policy other than transformers', the
 * kvscope extensions, and where the cache is dequantized (absent: eval's default, as the run's).
 * The layer map goes as its content (`layer-map-text`, one line of JSON): a sweep point cannot read
 * the file the panel opened.
 */
export function cacheOptions(settings: Pick<RunSettings, 'quantization' | 'dequantize'>): Record<string, SweepValue> {
  const q = settings.quantization;
  const extensions = q.extensions ?? {};
  const out: Record<string, SweepValue> = {};
  if (q.layerPolicy !== 'all') out['layer-policy'] = q.layerPolicy;
  if (extensions.nbitsKey !== undefined) out['nbits-key'] = extensions.nbitsKey;
  if (extensions.nbitsValue !== undefined) out['nbits-value'] = extensions.nbitsValue;
  if (extensions.layerMap !== undefined) out['layer-map-text'] = JSON.stringify(JSON.parse(formatLayerMap(extensions.layerMap, 'json')));
  if (extensions.fullPrecisionFirstLayers !== undefined) out['full-precision-first'] = extensions.fullPrecisionFirstLayers;
  if (extensions.fullPrecisionLastLayers !== undefined) out['full-precision-last'] = extensions.fullPrecisionLastLayers;
  if (extensions.sinkTokens !== undefined) out['sink-tokens'] = extensions.sinkTokens;
  if (extensions.rotation !== undefined) out['rotate'] = extensions.rotation;
  if (extensions.rotateValues === true) out['rotate-values'] = true;
  if (extensions.outlierQuantile !== undefined) out['outliers'] = extensions.outlierQuantile;
  if (extensions.kvFormatKey !== undefined) out['kv-format-key'] = extensions.kvFormatKey;
  if (extensions.kvFormatValue !== undefined) out['kv-format-value'] = extensions.kvFormatValue;
  if (extensions.calculateKvScales === true) out['calculate-kv-scales'] = true;
  if (settings.dequantize !== undefined) out['dequantize'] = settings.dequantize;
  return out;
}
