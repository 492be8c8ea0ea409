import { ROTATION_KINDS, type CacheExtensions, type RotationKind } from '../cache/cache-extensions.js';
import { parseLayerMap } from '../cache/layer-map.js';
import { UsageError, type CliIo } from './io.js';
import { choiceOption, integerOption, numberOption, optionalString, type RawOptions } from './options.js';

/**
 * The kvscope extensions' command-line options (cache-extensions.ts), declared once in the shape of
 * `util.parseArgs` option specs: main/cli spreads them into the cache options of every command that
 * takes a cache (`preflight`, `run`, and the lab's `eval` and `sweep`, whose sweep keys are these
 * long names without the dashes).
 */
export const EXTENSION_OPTION_SPECS = {
  'nbits-key': { type: 'string' },
  'nbits-value': { type: 'string' },
  'layer-map': { type: 'string' },
  // the layer map's content itself (YAML or JSON text): what a sweep spec and the Lab carry, as a point cannot read the panel's file
  'layer-map-text': { type: 'string' },
  'full-precision-first': { type: 'string' },
  'full-precision-last': { type: 'string' },
  'sink-tokens': { type: 'string' },
  rotate: { type: 'string' },
  'rotate-values': { type: 'boolean' },
  outliers: { type: 'string' },
  // a serving runtime's write-once KV format (issue 27; app/quant/runtime-formats/registry.ts)
  'kv-format': { type: 'string' },
  'kv-format-key': { type: 'string' },
  'kv-format-value': { type: 'string' },
  'calculate-kv-scales': { type: 'boolean' },
} as const satisfies Record<string, { readonly type: 'string' | 'boolean' }>;

export const EXTENSION_FLAGS = Object.keys(EXTENSION_OPTION_SPECS) as readonly (keyof typeof EXTENSION_OPTION_SPECS)[];

/**
 * The extensions the flags ask for; undefined when none is given (transformers' QuantizedCache
 * exactly). Only the form is checked here (an integer, a number, a readable layer map); whether the
 * values fit the backend and the model is the preflight's verdict (app/cache/extension-problems.ts).
 * `io` reads `--layer-map`.
 */
export function extensionsFromOptions(options: RawOptions, io?: CliIo): CacheExtensions | undefined {
  if (!EXTENSION_FLAGS.some((flag) => options[flag] !== undefined)) return undefined;
  const integer = (flag: string): number | undefined => (options[flag] === undefined ? undefined : integerOption(options, flag));
  const layerMapPath = optionalString(options, 'layer-map');
  if (layerMapPath !== undefined && io === undefined) throw new UsageError('--layer-map needs a file system here; this command cannot read it.');
  const rotation = options['rotate'] === undefined ? undefined : choiceOption<RotationKind>(options, 'rotate', ROTATION_KINDS);
  const outliers = options['outliers'] === undefined ? undefined : numberOption(options, 'outliers', 0);
  const extensions: { -readonly [K in keyof CacheExtensions]: CacheExtensions[K] } = {};
  const nbitsKey = integer('nbits-key');
  const nbitsValue = integer('nbits-value');
  const first = integer('full-precision-first');
  const last = integer('full-precision-last');
  const sink = integer('sink-tokens');
  if (nbitsKey !== undefined) extensions.nbitsKey = nbitsKey;
  if (nbitsValue !== undefined) extensions.nbitsValue = nbitsValue;
  if (layerMapPath !== undefined) extensions.layerMap = parseLayerMap(io!.readTextFile(layerMapPath, 'layer-map'), layerMapPath);
  const layerMapText = optionalString(options, 'layer-map-text');
  if (layerMapText !== undefined) {
    if (layerMapPath !== undefined) throw new UsageError('--layer-map and --layer-map-text both give a layer map; keep one.');
    // The same bound as a --layer-map file (app/node's guarded read): a map has one short entry per layer.
    if (layerMapText.length > 1024 * 1024) throw new UsageError('--layer-map-text is longer than the 1.00 MiB kvscope reads for a layer map; a layer map has one entry per decoder layer.');
    extensions.layerMap = parseLayerMap(layerMapText, '--layer-map-text');
  }
  if (first !== undefined) extensions.fullPrecisionFirstLayers = first;
  if (last !== undefined) extensions.fullPrecisionLastLayers = last;
  if (sink !== undefined) extensions.sinkTokens = sink;
  if (rotation !== undefined) extensions.rotation = rotation;
  if (options['rotate-values'] === true) extensions.rotateValues = true;
  if (outliers !== undefined) extensions.outlierQuantile = outliers;
  const formats = kvFormatsFromOptions(options);
  if (formats !== undefined) {
    extensions.kvFormatKey = formats.key;
    extensions.kvFormatValue = formats.value;
  }
  if (options['calculate-kv-scales'] === true) extensions.calculateKvScales = true;
  return extensions;
}

/** transformers' QuantizedCache arguments, which a runtime format replaces. */
const BACKEND_FLAGS = ['backend', 'nbits', 'axis-key', 'axis-value', 'group-size', 'residual-length'] as const;

/**
 * `--kv-format F` (keys and values) or `--kv-format-key F --kv-format-value G`. Whether F exists and
 * fits the model is the preflight's verdict (extension-problems.ts); here only the spelling, and no
 * backend argument beside it (the format replaces the backend's store, so they would be ignored).
 */
function kvFormatsFromOptions(options: RawOptions): { key: string; value: string } | undefined {
  const both = optionalString(options, 'kv-format');
  const key = optionalString(options, 'kv-format-key');
  const value = optionalString(options, 'kv-format-value');
  if (both === undefined && key === undefined && value === undefined) return undefined;
  const backendFlag = BACKEND_FLAGS.find((flag) => options[flag] !== undefined);
  if (backendFlag !== undefined) {
    throw new UsageError(`--${backendFlag} configures transformers' QuantizedCache, which --kv-format replaces with a runtime's own format. Drop one of them.`);
  }
  if (both !== undefined) {
    if (key !== undefined || value !== undefined) throw new UsageError('--kv-format sets keys and values at once; drop it, or drop --kv-format-key/--kv-format-value.');
    return { key: both, value: both };
  }
  if (key === undefined || value === undefined) {
    throw new UsageError(`--kv-format-${key === undefined ? 'value' : 'key'} needs --kv-format-${key === undefined ? 'key' : 'value'} too (or --kv-format F for both).`);
  }
  return { key, value };
}
