import { Document, parse, YAMLError } from 'yaml';
import { KvscopeError } from '../errors.js';
import { layerBits, type GlobalBits, type LayerMap, type LayerMapEntry } from './cache-extensions.js';

/** A layer-map file that cannot be read: the message names the file, the entry and what to write instead. */
export class LayerMapError extends KvscopeError {
  override readonly name = 'LayerMapError';
}

export type LayerMapFormat = 'yaml' | 'json';

/**
 * Layer maps as files, in KVTuner's calibration-preset format (KexuanZhang/KVTuner
 * `calibration_presets/*.yaml`, read there with `yaml.safe_load`): a mapping from the decoder layer
 * index to `{nbits_key: N, nbits_value: N}`. kvscope adds one value KVTuner has no spelling for:
 * `full`, a layer kept in full precision. JSON files are the same mapping (`{"0": {"nbits_key": 8,
 * "nbits_value": 4}, "1": "full"}`); both are read with the `yaml` package (JSON is YAML 1.2).
 */
export function parseLayerMap(text: string, sourceName: string): LayerMap {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    const reason = error instanceof YAMLError ? error.message.split('\n')[0] : String(error);
    throw new LayerMapError(`${sourceName} is not valid YAML or JSON: ${reason}. A layer map maps layer indices to {nbits_key, nbits_value} or full.`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new LayerMapError(`${sourceName} is not a layer map: expected a mapping such as "0: {nbits_key: 8, nbits_value: 4}", one entry per layer.`);
  }
  const entries: LayerMapEntry[] = [];
  for (const [key, value] of Object.entries(document as Record<string, unknown>)) {
    if (!/^\d+$/.test(key)) throw new LayerMapError(`${sourceName}: "${key}" is not a layer index; the keys are decoder layer numbers 0, 1, 2, ….`);
    entries.push(readEntry(Number(key), value, sourceName));
  }
  return entries.sort((a, b) => a.layer - b.layer);
}

function readEntry(layer: number, value: unknown, sourceName: string): LayerMapEntry {
  if (value === 'full') return { layer, fullPrecision: true };
  const where = `${sourceName}, layer ${layer}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LayerMapError(`${where}: expected {nbits_key: N, nbits_value: N} or full, got ${JSON.stringify(value) ?? String(value)}.`);
  }
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((name) => name !== 'nbits_key' && name !== 'nbits_value');
  if (unknown.length > 0) throw new LayerMapError(`${where}: unknown field ${unknown.map((name) => `"${name}"`).join(', ')}; a layer takes nbits_key and nbits_value.`);
  const bits = (name: 'nbits_key' | 'nbits_value'): number => {
    const n = fields[name];
    if (typeof n !== 'number' || !Number.isInteger(n)) throw new LayerMapError(`${where}: ${name} must be an integer number of bits, got ${JSON.stringify(n) ?? 'nothing'}.`);
    return n;
  };
  return { layer, nbitsKey: bits('nbits_key'), nbitsValue: bits('nbits_value') };
}

/**
 * Every layer's resolved setting (shorthands, layer map, K/V bits and nbits applied): what a run of
 * `numLayers` layers would use, as a complete preset. Layers without a KV cache are the caller's to drop.
 */
export function resolvedLayerMap(settings: GlobalBits, numLayers: number): LayerMap {
  return Array.from({ length: numLayers }, (_, layer): LayerMapEntry => {
    const bits = layerBits(settings, layer, numLayers);
    return bits === 'full-precision' ? { layer, fullPrecision: true } : { layer, nbitsKey: bits.key, nbitsValue: bits.value };
  });
}

/** The file text: KVTuner's YAML (integer keys, as `yaml.safe_load` reads them back) or the same mapping as JSON. */
export function formatLayerMap(map: LayerMap, format: LayerMapFormat): string {
  if (format === 'json') {
    const object: Record<string, unknown> = {};
    for (const entry of map) object[String(entry.layer)] = fileValue(entry);
    return JSON.stringify(object, null, 2) + '\n';
  }
  const document = new Document(new Map(map.map((entry) => [entry.layer, fileValue(entry)])));
  document.commentBefore = ' kvscope layer map (KVTuner preset format): layer -> {nbits_key, nbits_value}; "full" = full precision (a kvscope extension)';
  return document.toString();
}

function fileValue(entry: LayerMapEntry): unknown {
  return 'fullPrecision' in entry ? 'full' : { nbits_key: entry.nbitsKey, nbits_value: entry.nbitsValue };
}

/** `.json` files are written as JSON, anything else as YAML. */
export function layerMapFormatOf(path: string): LayerMapFormat {
  return path.toLowerCase().endsWith('.json') ? 'json' : 'yaml';
}
