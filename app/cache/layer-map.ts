import { Document, parseDocument } from 'yaml';
import { KvscopeError } from '../errors.js';
import { layerBits, layerFormats, quantizedLayerEntry, type EntrySide, type GlobalBits, type LayerMap, type LayerMapEntry } from './cache-extensions.js';
import { RUNTIME_FORMAT_NAMES } from '../quant/runtime-formats/registry.js';

/** A layer-map file that cannot be read: the message names the file, the entry and what to write instead. */
export class LayerMapError extends KvscopeError {
  override readonly name = 'LayerMapError';
}

export type LayerMapFormat = 'yaml' | 'json';

/**
 * Layer maps as files, in KVTuner's calibration-preset format (KexuanZhang/KVTuner
 * `calibration_presets/*.yaml`, read there with `yaml.safe_load`): a mapping from the decoder layer
 * index to `{nbits_key: N, nbits_value: N}`. kvscope adds one value KVTuner has no spelling for:
 * `full`, a layer kept in full precision, or as one side's bits (`{nbits_key: 4, nbits_value: full}`:
 * keys quantized, values kept exact; the cache plan's per-side full precision, cache-plan.ts), and a side
 * in a serving runtime's write-once format, spelled as `--kv-format` spells it, in place of its bits
 * (`{format_key: llama.cpp:q8_0, nbits_value: 4}`, issue 27). JSON files are the same mapping (`{"0": {"nbits_key": 8,
 * "nbits_value": 4}, "1": "full"}`); both are read with the `yaml` package (JSON is YAML 1.2).
 */
export function parseLayerMap(text: string, sourceName: string): LayerMap {
  const document = readDocument(text, sourceName);
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

/** Flow collections (`[`, `{`) a layer map nests: two (`{0: {nbits_key: 4}}`); anything near this is no layer map. */
const MAX_FLOW_DEPTH = 64;

/**
 * Whether `[`/`{` nest deeper than `limit`, in one pass: brackets inside quoted scalars and comments
 * do not count.
 */
function flowDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      // a double-quoted scalar escapes with a backslash, a single-quoted one by doubling the quote
      for (i++; i < text.length && text[i] !== c; i++) if (c === '"' && text[i] === '\\') i++;
    } else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '[' || c === '{') {
      if (++depth > limit) return true;
    } else if ((c === ']' || c === '}') && depth > 0) {
      depth--;
    }
  }
  return false;
}

/**
 * The file's value. The `yaml` package would print a YAMLWarning on the terminal for a tag it does not
 * know (`!!js/function`, `!!python/object`: PyYAML's and js-yaml's unsafe types) and read the text as a
 * string; a layer map has numbers and `full` only, so such a tag is refused in words instead.
 */
function readDocument(text: string, sourceName: string): unknown {
  const what = 'A layer map maps layer indices to {nbits_key, nbits_value} or full.';
  // Refused before the parser: it takes seconds (and its stack) on a map nested 200,000 deep.
  if (flowDepthExceeds(text, MAX_FLOW_DEPTH)) throw new LayerMapError(`${sourceName} is not valid YAML or JSON: it nests deeper than any layer map does. ${what}`);
  let parsed;
  try {
    parsed = parseDocument(text, { logLevel: 'silent' });
  } catch (error) {
    // A flow collection nested hundreds of thousands deep overflows the parser's stack.
    const reason = error instanceof RangeError ? 'it nests deeper than any layer map does' : String(error);
    throw new LayerMapError(`${sourceName} is not valid YAML or JSON: ${reason}. ${what}`);
  }
  const error = parsed.errors[0];
  if (error !== undefined) {
    const reason = /Maximum call stack/.test(error.message) ? 'it nests deeper than any layer map does' : firstLine(error.message);
    throw new LayerMapError(`${sourceName} is not valid YAML or JSON: ${reason}. ${what}`);
  }
  const tag = parsed.warnings.find((warning) => warning.code === 'TAG_RESOLVE_FAILED');
  if (tag !== undefined) {
    throw new LayerMapError(`${sourceName} uses a YAML tag kvscope does not read (${firstLine(tag.message)}); a layer map holds numbers and full only. ${what}`);
  }
  try {
    return parsed.toJS({ maxAliasCount: 100 });
  } catch (error) {
    const reason = error instanceof Error ? firstLine(error.message) : String(error);
    throw new LayerMapError(`${sourceName} is not valid YAML or JSON: ${reason}. ${what}`);
  }
}

/** The `yaml` package's message without its source excerpt: "… at line 1, column 4". */
function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/:$/, '');
}

function readEntry(layer: number, value: unknown, sourceName: string): LayerMapEntry {
  if (value === 'full') return { layer, fullPrecision: true };
  const where = `${sourceName}, layer ${layer}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LayerMapError(`${where}: expected {nbits_key: N, nbits_value: N} or full, got ${JSON.stringify(value) ?? String(value)}.`);
  }
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((name) => !FIELDS.includes(name));
  if (unknown.length > 0) throw new LayerMapError(`${where}: unknown field ${unknown.map((name) => `"${name}"`).join(', ')}; a layer takes nbits_key and nbits_value (or format_key, format_value).`);
  // A side is given by its bits or, a kvscope extension, by a runtime format (`format_key: llama.cpp:q8_0`), never both.
  const side = (part: 'key' | 'value'): EntrySide => {
    const bitsName = `nbits_${part}`;
    const formatName = `format_${part}`;
    const n = fields[bitsName];
    const format = fields[formatName];
    if (format !== undefined) {
      if (n !== undefined) throw new LayerMapError(`${where}: ${bitsName} and ${formatName} both give the ${part}s; keep one (${formatName} stores them in that runtime format).`);
      if (typeof format !== 'string' || !RUNTIME_FORMAT_NAMES.includes(format)) {
        throw new LayerMapError(`${where}: ${formatName} must name a runtime KV format as --kv-format does, got ${JSON.stringify(format)}. Formats: ${RUNTIME_FORMAT_NAMES.join(', ')}.`);
      }
      return { format };
    }
    if (n === 'full') return { bits: 'full' };
    if (typeof n !== 'number' || !Number.isInteger(n)) throw new LayerMapError(`${where}: ${bitsName} must be an integer number of bits or full, got ${JSON.stringify(n) ?? 'nothing'}.`);
    return { bits: n };
  };
  const keys = side('key');
  const values = side('value');
  if ('bits' in keys && keys.bits === 'full' && 'bits' in values && values.bits === 'full') return { layer, fullPrecision: true };
  return quantizedLayerEntry(layer, keys, values);
}

const FIELDS: readonly string[] = ['nbits_key', 'nbits_value', 'format_key', 'format_value'];

/**
 * Every layer's resolved setting (shorthands, layer map, K/V bits and nbits applied): what a run of
 * `numLayers` layers would use, as a complete preset. Layers without a KV cache are the caller's to drop.
 */
export function resolvedLayerMap(settings: GlobalBits, numLayers: number): LayerMap {
  return Array.from({ length: numLayers }, (_, layer): LayerMapEntry => {
    const bits = layerBits(settings, layer, numLayers);
    if (bits === 'full-precision') return { layer, fullPrecision: true };
    // a side in a runtime format (the map's or --kv-format's) is written as that format, a `full` side as full
    const formats = layerFormats(settings, layer);
    const formatKey = bits.key === 'full' ? undefined : formats.key;
    const formatValue = bits.value === 'full' ? undefined : formats.value;
    return quantizedLayerEntry(layer, formatKey === undefined ? { bits: bits.key } : { format: formatKey }, formatValue === undefined ? { bits: bits.value } : { format: formatValue });
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
  document.commentBefore = ' kvscope layer map (KVTuner preset format): layer -> {nbits_key, nbits_value}; "full" = full precision, a layer or one side;'
    + ' format_key/format_value = that side in a runtime format (kvscope extensions)';
  return document.toString();
}

function fileValue(entry: LayerMapEntry): unknown {
  if ('fullPrecision' in entry) return 'full';
  return {
    ...(entry.formatKey === undefined ? { nbits_key: entry.nbitsKey } : { format_key: entry.formatKey }),
    ...(entry.formatValue === undefined ? { nbits_value: entry.nbitsValue } : { format_value: entry.formatValue }),
  };
}

/** `.json` files are written as JSON, anything else as YAML. */
export function layerMapFormatOf(path: string): LayerMapFormat {
  return path.toLowerCase().endsWith('.json') ? 'json' : 'yaml';
}
