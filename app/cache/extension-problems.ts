import { pythonNumberRepr } from '../python-repr.js';
import { backendRules } from '../quant/backend-rules.js';
import { describeHadamard, planHadamard } from '../quant/hadamard.js';
import { nbitsMessage } from '../quant/library-messages.js';
import type { QuantizedCacheSettings } from './cache-config.js';
import { RUNTIME_FORMATS, runtimeFormat } from '../quant/runtime-formats/registry.js';
import { RuntimeFormatError, type RuntimeFormat } from '../quant/runtime-formats/types.js';
import { layerMapFormats, ROTATION_KINDS, type CacheExtensions } from './cache-extensions.js';

/** Stable codes of the extensions' findings (the preflight reports them as its own codes). */
export type ExtensionProblemCode =
  | 'invalid-nbits-key'
  | 'invalid-nbits-value'
  | 'invalid-layer-map'
  | 'invalid-full-precision-layers'
  | 'invalid-sink-tokens'
  | 'invalid-rotation'
  | 'rotation-block-diagonal'
  | 'invalid-outlier-quantile'
  | 'invalid-kv-format'
  | 'kv-format-refused';

export interface ExtensionProblem {
  readonly code: ExtensionProblemCode;
  /** errors refuse the run; info states what will happen (a block-diagonal rotation) */
  readonly severity: 'error' | 'info';
  /** 'backend' where the text is the backend's own refusal (transformers' nbits message), else 'kvscope' */
  readonly origin: 'backend' | 'kvscope';
  readonly message: string;
  readonly fix: string;
  readonly layers: number[];
}

/** What is known of the model; without it (a bare cache) the layer- and head_dim-dependent checks wait. */
export interface ExtensionContext {
  readonly numLayers?: number;
  /** head_dim of keys and values */
  readonly headDims?: { readonly key: number; readonly value: number };
}

/**
 * THE validation of the kvscope extensions (cache-extensions.ts), for the preflight (which reports
 * every problem, with the layers concerned) and the cache (which refuses to build with the first
 * error). Each side's bits are checked against the backend exactly as transformers checks `nbits`
 * (spec §1.2), with its message verbatim and the extension named after it.
 */
export function extensionProblems(settings: QuantizedCacheSettings, context: ExtensionContext = {}): ExtensionProblem[] {
  const ext = settings.extensions;
  if (ext === undefined) return [];
  return [
    ...bitsProblems(settings, ext),
    ...layerMapProblems(settings, ext, context.numLayers),
    ...fullPrecisionProblems(ext, context.numLayers),
    ...sinkProblems(ext),
    ...rotationProblems(ext, context.headDims),
    ...outlierProblems(ext),
    ...kvFormatProblems(ext, context.headDims),
  ];
}

function isCount(value: number | undefined): boolean {
  return value === undefined || (Number.isSafeInteger(value) && value >= 0);
}

/** transformers' nbits message for one side's bits, or null when the backend takes them (or is unknown: the preflight refuses it first). */
function backendBitsMessage(settings: QuantizedCacheSettings, bits: number): string | null {
  const rules = backendRules(String(settings.backend));
  if (rules === null || rules.nbits.includes(bits)) return null;
  return nbitsMessage(rules.messageName, rules.nbits, bits);
}

function allowedBits(settings: QuantizedCacheSettings): string {
  return backendRules(String(settings.backend))?.nbits.join(', ') ?? '';
}

function bitsProblems(settings: QuantizedCacheSettings, ext: CacheExtensions): ExtensionProblem[] {
  const problems: ExtensionProblem[] = [];
  for (const [side, bits, flag] of [['keys', ext.nbitsKey, '--nbits-key'], ['values', ext.nbitsValue, '--nbits-value']] as const) {
    if (bits === undefined) continue;
    const message = backendBitsMessage(settings, bits);
    if (message === null) continue;
    problems.push({
      code: side === 'keys' ? 'invalid-nbits-key' : 'invalid-nbits-value',
      severity: 'error',
      origin: 'backend',
      message: `${message}\nkvscope extension ${flag}: the ${side}' bits, checked as transformers checks nbits (the ${settings.backend} backend stores ${allowedBits(settings)}-bit codes only).`,
      fix: `Use ${flag} with one of ${allowedBits(settings)}.`,
      layers: [],
    });
  }
  return problems;
}

function layerMapProblems(settings: QuantizedCacheSettings, ext: CacheExtensions, numLayers: number | undefined): ExtensionProblem[] {
  const map = ext.layerMap;
  if (map === undefined) return [];
  const problems: ExtensionProblem[] = [];
  const problem = (message: string, fix: string, layers: number[]): void => {
    problems.push({ code: 'invalid-layer-map', severity: 'error', origin: 'kvscope', message: `kvscope extension --layer-map: ${message}`, fix, layers });
  };
  const seen = new Set<number>();
  for (const entry of map) {
    if (!Number.isSafeInteger(entry.layer) || entry.layer < 0) {
      problem(`${entry.layer} is not a layer index.`, 'Key the map by decoder layer numbers 0, 1, 2, ….', []);
      continue;
    }
    if (seen.has(entry.layer)) problem(`layer ${entry.layer} is listed twice.`, 'Give each layer one entry.', [entry.layer]);
    seen.add(entry.layer);
    if (numLayers !== undefined && entry.layer >= numLayers) {
      problem(`layer ${entry.layer} does not exist: this model has layers 0…${numLayers - 1}.`, 'Use a layer map made for this model (KVTuner presets are per model).', [entry.layer]);
    }
    if ('fullPrecision' in entry) continue;
    for (const [name, bits, format] of [['nbits_key', entry.nbitsKey, entry.formatKey], ['nbits_value', entry.nbitsValue, entry.formatValue]] as const) {
      // a runtime-format side has no bits (cache-extensions.ts); its format is checked below
      if (bits === 'full' || bits === undefined || format !== undefined) continue;
      const message = backendBitsMessage(settings, bits);
      if (message !== null) problem(`layer ${entry.layer}'s ${name}: ${message}`, `Use ${allowedBits(settings)} bits, or "full" for a full-precision layer.`, [entry.layer]);
    }
    // One cache layer stores both sides: a WriteOnceLayer (runtime formats, or full) or transformers' QuantizedLayer.
    const formatSide = entry.formatKey !== undefined ? 'keys' : entry.formatValue !== undefined ? 'values' : null;
    const backendSide = entry.formatKey === undefined && entry.nbitsKey !== 'full' ? 'keys' : entry.formatValue === undefined && entry.nbitsValue !== 'full' ? 'values' : null;
    if (formatSide !== null && backendSide !== null && ext.kvFormatKey === undefined) {
      problem(`layer ${entry.layer} stores its ${formatSide} in a runtime format and its ${backendSide} with ${settings.backend}'s quantizer; one layer's cache is either a runtime's write-once layer or transformers' QuantizedLayer.`,
        `Give layer ${entry.layer} format_key and format_value (either may be "full" through nbits_*: full), or nbits_key and nbits_value.`, [entry.layer]);
    }
  }
  return problems;
}

function fullPrecisionProblems(ext: CacheExtensions, numLayers: number | undefined): ExtensionProblem[] {
  const first = ext.fullPrecisionFirstLayers;
  const last = ext.fullPrecisionLastLayers;
  const problem = (message: string, fix: string): ExtensionProblem =>
    ({ code: 'invalid-full-precision-layers', severity: 'error', origin: 'kvscope', message: `kvscope extension: ${message}`, fix, layers: [] });
  if (!isCount(first) || !isCount(last)) {
    return [problem(`--full-precision-first and --full-precision-last take a number of layers ≥ 0, got ${first ?? 0} and ${last ?? 0}.`, 'Pass whole numbers of layers.')];
  }
  if (numLayers !== undefined && (first ?? 0) + (last ?? 0) >= numLayers && (first ?? 0) + (last ?? 0) > 0) {
    return [problem(
      `the first ${first ?? 0} and last ${last ?? 0} layers in full precision cover all ${numLayers} layers, so nothing would be quantized.`,
      'Keep fewer layers in full precision, or run with --cache dynamic.',
    )];
  }
  return [];
}

function sinkProblems(ext: CacheExtensions): ExtensionProblem[] {
  if (isCount(ext.sinkTokens)) return [];
  return [{
    code: 'invalid-sink-tokens', severity: 'error', origin: 'kvscope',
    message: `kvscope extension --sink-tokens: the number of first tokens kept in full precision must be an integer ≥ 0, got ${pythonNumberRepr(ext.sinkTokens!)}.`,
    fix: 'Use --sink-tokens 0 (off), 4 or 16, for example.', layers: [],
  }];
}

function rotationProblems(ext: CacheExtensions, headDims: ExtensionContext['headDims']): ExtensionProblem[] {
  if (ext.rotation === undefined) {
    if (ext.rotateValues !== true) return [];
    return [{
      code: 'invalid-rotation', severity: 'error', origin: 'kvscope',
      message: 'kvscope extension --rotate-values rotates the values in addition to the keys, but no rotation is chosen.',
      fix: 'Add --rotate hadamard, or drop --rotate-values.', layers: [],
    }];
  }
  if (!(ROTATION_KINDS as readonly string[]).includes(ext.rotation)) {
    return [{
      code: 'invalid-rotation', severity: 'error', origin: 'kvscope',
      message: `kvscope extension --rotate: unknown rotation ${JSON.stringify(ext.rotation)}; kvscope knows ${ROTATION_KINDS.join(', ')}.`,
      fix: 'Use --rotate hadamard.', layers: [],
    }];
  }
  if (headDims === undefined) return [];
  const sides = ext.rotateValues === true ? [['keys', headDims.key], ['values', headDims.value]] as const : [['keys', headDims.key]] as const;
  return sides.flatMap(([side, headDim]): ExtensionProblem[] => {
    const plan = planHadamard(headDim);
    if ('refused' in plan) {
      return [{ code: 'invalid-rotation', severity: 'error', origin: 'kvscope', message: `kvscope extension --rotate hadamard (${side}): ${plan.refused}`, fix: 'Drop --rotate for this model.', layers: [] }];
    }
    if (plan.blocks === 1) return [];
    return [{
      code: 'rotation-block-diagonal', severity: 'info', origin: 'kvscope',
      message: `kvscope extension --rotate hadamard (${side}): head_dim ${headDim} is not a power of two, so the rotation is ${describeHadamard(plan)} ` +
        `(the largest power of two dividing ${headDim}); each block is rotated on its own.`,
      fix: 'Nothing to do; a block of 16 or more spreads outliers nearly as well as one full rotation.', layers: [],
    }];
  });
}

function outlierProblems(ext: CacheExtensions): ExtensionProblem[] {
  const q = ext.outlierQuantile;
  if (q === undefined || (Number.isFinite(q) && q > 0 && q < 1)) return [];
  return [{
    code: 'invalid-outlier-quantile', severity: 'error', origin: 'kvscope',
    message: `kvscope extension --outliers: the magnitude quantile must lie strictly between 0 and 1, got ${pythonNumberRepr(q)}.`,
    fix: 'Use --outliers 0.99 to keep the top 1% of values exactly (KVQuant keeps about 1%).', layers: [],
  }];
}

/** The knobs of transformers' store that a runtime format replaces: they cannot apply to its bytes. */
const NOT_WITH_KV_FORMAT: readonly (readonly [keyof CacheExtensions, string])[] = [
  ['nbitsKey', '--nbits-key'], ['nbitsValue', '--nbits-value'], ['layerMap', '--layer-map'], ['sinkTokens', '--sink-tokens'],
  ['rotation', '--rotate'], ['rotateValues', '--rotate-values'], ['outlierQuantile', '--outliers'],
];

/**
 * `--kv-format` (issue 27): both sides named, each a known format, no knob of transformers' store
 * beside it, and the runtime's own refusal for this head_dim (llama.cpp's block of 32, MLX's group…).
 */
function kvFormatProblems(ext: CacheExtensions, headDims: ExtensionContext['headDims']): ExtensionProblem[] {
  const { kvFormatKey, kvFormatValue } = ext;
  const problem = (code: ExtensionProblemCode, origin: 'backend' | 'kvscope', message: string, fix: string, layers: number[] = []): ExtensionProblem =>
    ({ code, severity: 'error', origin, message, fix, layers });
  if (kvFormatKey === undefined && kvFormatValue === undefined) {
    const mapped = layerMapFormats(ext);
    if (mapped.length > 0) return layerMapFormatProblems(ext, mapped, headDims, problem);
    if (ext.calculateKvScales !== true) return [];
    return [problem('invalid-kv-format', 'kvscope', 'kvscope extension --calculate-kv-scales computes vLLM\'s per-tensor FP8 scales, but no runtime format is chosen.',
      'Add --kv-format vllm:fp8_e4m3 (or fp8_e5m2), or drop --calculate-kv-scales.')];
  }
  if (kvFormatKey === undefined || kvFormatValue === undefined) {
    return [problem('invalid-kv-format', 'kvscope', 'kvscope extension --kv-format: keys and values each need a runtime format, but only one is given.',
      'Use --kv-format F for both, or give --kv-format-key and --kv-format-value together.')];
  }
  // A layer map beside a runtime format says only which layers or sides stay in full precision (the cache plan's `full`, cache-plan.ts).
  const onlyFull = ext.layerMap?.every((entry) => 'fullPrecision' in entry || entry.nbitsKey === 'full' || entry.nbitsValue === 'full') === true;
  const clashing = NOT_WITH_KV_FORMAT.filter(([field]) => ext[field] !== undefined && !(field === 'layerMap' && onlyFull)).map(([, flag]) => flag);
  if (clashing.length > 0) {
    return [problem('invalid-kv-format', 'kvscope', `kvscope extension --kv-format stores the runtime's own bytes, which ${clashing.join(', ')} cannot change.`,
      `Drop ${clashing.join(', ')}, or drop --kv-format to use transformers' QuantizedCache with them.`)];
  }
  const problems: ExtensionProblem[] = [];
  if (ext.calculateKvScales === true && ![kvFormatKey, kvFormatValue].some((name) => RUNTIME_FORMATS.find((f) => f.name === name)?.tensorScale === 'default-or-calculated')) {
    problems.push(problem('invalid-kv-format', 'kvscope', `kvscope extension --calculate-kv-scales: neither ${kvFormatKey} nor ${kvFormatValue} has a per-tensor scale to calculate (only vLLM's FP8 formats do).`,
      'Drop --calculate-kv-scales, or use --kv-format vllm:fp8_e4m3.'));
  }
  for (const [side, name, flag] of [['key', kvFormatKey, '--kv-format-key'], ['value', kvFormatValue, '--kv-format-value']] as const) {
    const found = formatProblem(name, side, flag, headDims, problem, []);
    if (found !== null) problems.push(found);
  }
  return problems;
}

type ProblemOf = (code: ExtensionProblemCode, origin: 'backend' | 'kvscope', message: string, fix: string, layers?: number[]) => ExtensionProblem;

/** A format name that is no runtime format, or the runtime's own refusal of this side's head_dim; null when it runs. */
function formatProblem(name: string, side: 'key' | 'value', flag: string, headDims: ExtensionContext['headDims'], problem: ProblemOf, layers: number[]): ExtensionProblem | null {
  let format: RuntimeFormat;
  try {
    format = runtimeFormat(name);
  } catch (error) {
    if (!(error instanceof RuntimeFormatError)) throw error;
    return problem('invalid-kv-format', 'kvscope', `kvscope extension ${flag}: ${error.message}`, 'Pick one of the formats `kvscope run --help` lists.', layers);
  }
  if (headDims === undefined) return null;
  // The refusals read only head_dim and side (types.ts); the dtype does not change them.
  const refusal = format.refusal({ headDim: headDims[side], dtype: 'float16', side });
  if (refusal === null) return null;
  return problem('kv-format-refused', 'backend', `${refusal}\nkvscope extension ${flag} ${name}: the ${side}s of this model (head_dim ${headDims[side]}) are refused by ${format.runtime}.`,
    'Pick a format this head_dim allows (vllm:fp8_e4m3 takes any head_dim), or run transformers\' QuantizedCache without --kv-format.', layers);
}

/**
 * The layer map's own runtime formats (`format_key`/`format_value`, without --kv-format): each a
 * known format the runtime takes at this head_dim, said with the layers that use it; and
 * --calculate-kv-scales only where some format has a per-tensor scale.
 */
function layerMapFormatProblems(ext: CacheExtensions, names: readonly string[], headDims: ExtensionContext['headDims'], problem: ProblemOf): ExtensionProblem[] {
  const problems: ExtensionProblem[] = [];
  const entries = (ext.layerMap ?? []).flatMap((entry) => ('fullPrecision' in entry ? [] : [entry]));
  for (const side of ['key', 'value'] as const) {
    const byName = new Map<string, number[]>();
    for (const entry of entries) {
      const name = side === 'key' ? entry.formatKey : entry.formatValue;
      if (name !== undefined) byName.set(name, [...(byName.get(name) ?? []), entry.layer]);
    }
    for (const [name, layers] of byName) {
      const found = formatProblem(name, side, `--layer-map format_${side} (layer${layers.length > 1 ? 's' : ''} ${layers.join(', ')})`, headDims, problem, layers);
      if (found !== null) problems.push(found);
    }
  }
  if (ext.calculateKvScales === true && !names.some((name) => RUNTIME_FORMATS.find((f) => f.name === name)?.tensorScale === 'default-or-calculated')) {
    problems.push(problem('invalid-kv-format', 'kvscope', `kvscope extension --calculate-kv-scales: none of the layer map's formats (${names.join(', ')}) has a per-tensor scale to calculate (only vLLM's FP8 formats do).`,
      'Drop --calculate-kv-scales, or use vllm:fp8_e4m3 in the map.'));
  }
  return problems;
}
