import { parseModelConfig } from '../config/parse-model-config.js';
import type { ModelConfig } from '../config/model-config.js';
import { runPreflight, type PreflightResult } from '../preflight/run-preflight.js';
import type { Diagnostic } from '../preflight/diagnostic.js';
import { formatLayerList } from '../preflight/layer-list.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type LayerPolicy, type QuantizedCacheSettings } from '../cache/cache-config.js';
import { activeExtensions, EXTENSIONS_HEADING } from '../cache/active-extensions.js';
import { formatLayerMap, layerMapFormatOf, resolvedLayerMap } from '../cache/layer-map.js';
import { encodeUtf8 } from '../record/utf8.js';
import { extensionsFromOptions } from './extension-options.js';
import { ExitCode, UsageError, type CliIo } from './io.js';
import { choiceOption, integerOption, optionalString, requireString, type RawOptions } from './options.js';

/**
 * `kvscope preflight`: transformers' verdict on whether a model can take a `QuantizedCache`, plus
 * what transformers misses. Exit 0 when a run could start, 2 when refused, 1 on bad input.
 */
export function runPreflightCommand(options: RawOptions, io: CliIo): ExitCode {
  const configPath = requireString(options, 'config');
  const settings = settingsFromOptions(options, io);
  const sequenceLengths = sequenceLengthsOption(optionalString(options, 'seq-len'));
  const batch = integerOption(options, 'batch', 1);
  const config = readModelConfig(io, configPath);
  const result = runPreflight(config, settings, { ...(sequenceLengths ? { sequenceLengths } : {}), batch });
  const layerMapOut = optionalString(options, 'write-layer-map');
  if (layerMapOut !== undefined) writeLayerMap(io, layerMapOut, config, settings);
  io.stdout(options['json'] === true ? JSON.stringify(preflightJson(result)) + '\n' : formatPreflight(config, settings, result));
  return result.ok ? ExitCode.ok : ExitCode.refused;
}

/** The `--json` contract other tools rely on. */
export function preflightJson(result: PreflightResult): {
  ok: boolean;
  layerTypes: string[];
  diagnostics: { code: string; severity: string; message: string; layers: number[]; fix?: string }[];
} {
  return {
    ok: result.ok,
    layerTypes: result.layerTypes,
    diagnostics: result.diagnostics.map((d) => ({
      code: d.code, severity: d.severity, message: d.message, layers: d.layers, ...(d.fix !== undefined ? { fix: d.fix } : {}),
    })),
  };
}

/** Accepts a `config.json` or a model folder holding one. */
export function readModelConfig(io: CliIo, path: string): ModelConfig {
  const file = io.isDirectory(path) ? io.joinPath(path, 'config.json') : path;
  return parseModelConfig(io.readTextFile(file), file);
}

/** The cache flags as settings; `io` reads the kvscope extensions' `--layer-map` file. */
export function settingsFromOptions(options: RawOptions, io?: CliIo): QuantizedCacheSettings {
  const d = DEFAULT_QUANTIZED_CACHE_SETTINGS;
  const extensions = extensionsFromOptions(options, io);
  // The backend string goes through unchecked: transformers' own refusal ("Unknown quantization
  // backend `HQQ`") is part of the verdict, not a usage error.
  return {
    backend: optionalString(options, 'backend') ?? d.backend,
    nbits: integerOption(options, 'nbits', d.nbits),
    axisKey: integerOption(options, 'axis-key', d.axisKey),
    axisValue: integerOption(options, 'axis-value', d.axisValue),
    groupSize: integerOption(options, 'group-size', d.groupSize),
    residualLength: integerOption(options, 'residual-length', d.residualLength),
    layerPolicy: choiceOption<LayerPolicy>(options, 'layer-policy', ['all', 'full-attention-only'], d.layerPolicy),
    ...(extensions !== undefined ? { extensions } : {}),
  };
}

/**
 * `--write-layer-map FILE`: every layer's resolved bits (shorthands, layer map, K/V bits, nbits) as a
 * complete KVTuner preset (YAML) or JSON, for the layers that keep a KV cache.
 */
function writeLayerMap(io: CliIo, path: string, config: ModelConfig, settings: QuantizedCacheSettings): void {
  const withCache = new Set(config.layers.layers.flatMap((layer, index) => (layer.hasKvCache ? [index] : [])));
  const map = resolvedLayerMap(settings, config.geometry.numLayers).filter((entry) => withCache.has(entry.layer));
  io.writeFileAtomic(path, encodeUtf8(formatLayerMap(map, layerMapFormatOf(path))));
}

function sequenceLengthsOption(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const parts = text.split(',').map((s) => s.trim());
  if (parts.some((p) => !/^\d+$/.test(p) || Number(p) < 1)) {
    throw new UsageError(`--seq-len must be positive integers separated by commas, got ${JSON.stringify(text)}.`);
  }
  return parts.map(Number);
}

function formatPreflight(config: ModelConfig, s: QuantizedCacheSettings, r: PreflightResult): string {
  const g = config.geometry;
  const lines = [
    `${config.sourceName}`,
    `  ${config.modelType ?? 'unknown model_type'}: ${g.numLayers} layers, ${g.numAttentionHeads} heads, ${g.numKeyValueHeads} KV heads, head_dim ${g.headDim}`,
    `  layer types (transformers): ${summarizeTypes(r.layerTypes)}`,
    `  quantized layers: ${layerRange(r.layers.filter((l) => l.quantized).map((l) => l.index), g.numLayers)}`,
    `  QuantizedCache(backend=${JSON.stringify(String(s.backend))}, nbits=${s.nbits}, axis_key=${s.axisKey}, axis_value=${s.axisValue}, ` +
      `q_group_size=${s.groupSize}, residual_length=${s.residualLength}), layer policy ${s.layerPolicy}`,
    ...activeExtensions(s, g.numLayers).map((item, index) => `${index === 0 ? `  ${EXTENSIONS_HEADING}: ` : '    '}${item.label}: ${item.detail}`),
    '',
    r.ok ? 'OK: a quantized-cache run can start.' : 'REFUSED: a quantized-cache run cannot start.',
  ];
  for (const d of r.diagnostics) lines.push('', ...formatDiagnostic(d));
  return lines.join('\n') + '\n';
}

function formatDiagnostic(d: Diagnostic): string[] {
  const where = d.layers.length > 0 ? ` (layers ${layerRange(d.layers)})` : '';
  const [first = '', ...rest] = d.message.split('\n');
  return [
    `${d.severity.toUpperCase()} [${d.code}]${where}`,
    `  ${first}`,
    ...rest.map((line) => `  ${line}`),
    ...(d.fix !== undefined ? [`  fix: ${d.fix}`] : []),
  ];
}

/** `full_attention ×22, sliding_attention ×4` in first-seen order */
function summarizeTypes(types: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const t of types) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].map(([t, n]) => `${t} ×${n}`).join(', ') || 'none';
}

/** `0-3, 5, 7-9`; `all 16` when every layer is listed */
function layerRange(layers: readonly number[], total?: number): string {
  if (layers.length === 0) return 'none';
  if (total !== undefined && layers.length === total) return `all ${total}`;
  return formatLayerList(layers);
}
