import { parseGenaiConfig } from '../config/genai-config.js';
import { modelConfigFromGenai } from '../config/genai-model-config.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import type { ModelConfig } from '../config/model-config.js';
import type { ModelDiagnostic, ModelDiagnosticCode } from '../engine/model-diagnostic.js';
import type { LayoutSummary } from '../model-layout/layout-summary.js';
import { runPreflight, type PreflightResult } from '../preflight/run-preflight.js';
import type { Diagnostic } from '../preflight/diagnostic.js';
import { formatLayerList } from '../preflight/layer-list.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type LayerPolicy, type QuantizedCacheSettings } from '../cache/cache-config.js';
import { activeExtensions, EXTENSIONS_HEADING } from '../cache/active-extensions.js';
import { formatLayerMap, layerMapFormatOf, resolvedLayerMap } from '../cache/layer-map.js';
import { encodeUtf8 } from '../record/utf8.js';
import { formatWhatIfTable, whatIfLines, type WhatIfLine } from '../accounting/what-if-table.js';
import { MAX_WHAT_IF_CONTEXT } from '../accounting/memory-what-if.js';
import type { KvDtype } from '../tensor/kv-tensor.js';
import { formatBytes } from './byte-size.js';
import { targetsFromOptions } from './eval-options.js';
import { extensionsFromOptions } from './extension-options.js';
import { targetedQuantization, type LabTargets } from '../lab/lab-targets.js';
import { paddedSequenceLengths, padPromptToOption } from './pad-prompt-option.js';
import { ExitCode, UsageError, type CliIo } from './io.js';
import { choiceOption, integerOption, optionalString, requireString, type RawOptions } from './options.js';

/** What `kvscope preflight` learns about a model folder or graph from the host (Node: app/node/model/check-model.ts). */
export interface ModelCheck {
  /** null when no config could be read (the diagnostics say why) */
  readonly config: ModelConfig | null;
  /** null for a folder with a config but no graph (only the config is judged then) */
  readonly layout: LayoutSummary | null;
  /** the folder, config and graph I/O findings, errors first */
  readonly diagnostics: readonly ModelDiagnostic[];
}

/** How the preflight reads a model folder's layout and graph header (not its weights). */
export interface PreflightRuntime {
  checkModel(path: string, onnxFile?: string): Promise<ModelCheck>;
}

/** Findings about files that cannot be used as given: bad input (exit 1), not a refusal. */
const INPUT_PROBLEMS: ReadonlySet<ModelDiagnosticCode> = new Set([
  'model-folder-missing', 'config-missing', 'config-invalid', 'onnx-missing', 'onnx-unreadable', 'onnx-external-data-missing', 'tokenizer-invalid',
  'generation-config-invalid',
]);

/**
 * `kvscope preflight`: transformers' verdict on whether a model can take a `QuantizedCache`, plus
 * what transformers misses. Given a model folder or a graph (with `runtime`), it also reads the
 * layout and the graph's inputs and outputs from the protobuf header (weights never loaded), so a
 * graph kvscope cannot feed is refused here, before any run. Exit 0 when a run could start, 2 when
 * refused, 1 on bad input.
 */
export async function runPreflightCommand(options: RawOptions, io: CliIo, runtime?: PreflightRuntime): Promise<ExitCode> {
  const configPath = requireString(options, 'config');
  const onnxFile = optionalString(options, 'onnx');
  const given = settingsFromOptions(options, io);
  // --pad-prompt-to: the lengths a run with that padding quantizes at prefill (pad-prompt-option.ts)
  const sequenceLengths = paddedSequenceLengths(sequenceLengthsOption(optionalString(options, 'seq-len')), padPromptToOption(options));
  const batch = integerOption(options, 'batch', 1);
  const isModel = io.isDirectory(configPath) || configPath.endsWith('.onnx');
  if (onnxFile !== undefined && (!isModel || runtime === undefined)) throw new UsageError('--onnx picks a graph of a model folder: give --config the folder.');
  const check = isModel && runtime !== undefined ? await runtime.checkModel(configPath, onnxFile) : null;
  if (check !== null && check.config === null) {
    const first = check.diagnostics.find((d) => d.severity === 'error');
    throw new UsageError(`${first?.message ?? `no model config could be read from ${configPath}.`}${first?.fix !== undefined ? ` ${first.fix}` : ''}`);
  }
  const config = check?.config ?? readModelConfig(io, configPath);
  const settings = plannedSettings(given, targetsFromOptions(options), config);
  const result = runPreflight(config, settings, { ...(sequenceLengths ? { sequenceLengths } : {}), batch });
  const layerMapOut = optionalString(options, 'write-layer-map');
  if (layerMapOut !== undefined) writeLayerMap(io, layerMapOut, config, settings);
  const modelDiagnostics = check?.diagnostics ?? [];
  const whatIf = whatIfOption(options, config, settings);
  io.stdout(options['json'] === true
    ? JSON.stringify({ ...preflightJson(result, check ?? undefined), ...(whatIf !== null ? { whatIf: whatIf.lines.map((line) => ({ ...line, kvDtype: whatIf.kvDtype })) } : {}) }) + '\n'
    : formatPreflight(config, settings, result, check) + (whatIf !== null ? ['', ...formatWhatIfTable(whatIf.lines, whatIf.kvDtype, formatBytes)].join('\n') + '\n' : ''));
  const modelErrors = modelDiagnostics.filter((d) => d.severity === 'error');
  if (!result.ok || modelErrors.some((d) => !INPUT_PROBLEMS.has(d.code))) return ExitCode.refused;
  return modelErrors.length > 0 ? ExitCode.badInput : ExitCode.ok;
}

/** The `--json` contract other tools rely on; `layout` is there when a model folder or graph was checked. */
export function preflightJson(result: PreflightResult, check?: ModelCheck): {
  ok: boolean;
  layerTypes: string[];
  diagnostics: { code: string; severity: string; message: string; layers: number[]; fix?: string }[];
  layout?: LayoutSummary | null;
} {
  const modelDiagnostics = check?.diagnostics ?? [];
  return {
    ok: result.ok && !modelDiagnostics.some((d) => d.severity === 'error'),
    layerTypes: result.layerTypes,
    diagnostics: [...result.diagnostics, ...modelDiagnostics].map((d) => ({
      code: d.code, severity: d.severity, message: d.message, layers: d.layers, ...(d.fix !== undefined ? { fix: d.fix } : {}),
    })),
    ...(check !== undefined ? { layout: check.layout } : {}),
  };
}

/**
 * Accepts a `config.json`, a `genai_config.json` (ONNX Runtime GenAI: the config transformers would
 * read is derived from it), or a folder holding either (config.json first).
 */
export function readModelConfig(io: CliIo, path: string): ModelConfig {
  let file = path;
  if (io.isDirectory(path)) {
    file = io.joinPath(path, 'config.json');
    const genai = io.joinPath(path, 'genai_config.json');
    if (!isReadableFile(io, file) && isReadableFile(io, genai)) file = genai;
  }
  const text = io.readTextFile(file, 'config');
  return /(^|[\\/])genai_config\.json$/.test(file) ? modelConfigFromGenai(parseGenaiConfig(text, file)) : parseModelConfig(text, file);
}

/** Whether `path` names a file the config reader would read (hosts without isFile: try reading it). */
function isReadableFile(io: CliIo, path: string): boolean {
  if (io.isFile !== undefined) return io.isFile(path);
  try {
    io.readFile(path, 'config');
    return true;
  } catch {
    return false;
  }
}

/**
 * The settings the cache plan resolves (app/cache/cache-plan.ts): the flags, with the lab's
 * `--quantize-layers/--quantize-parts` targets made its layer map, so the verdict and
 * `--write-layer-map` say what an eval with those targets runs.
 */
function plannedSettings(settings: QuantizedCacheSettings, targets: LabTargets | undefined, config: ModelConfig): QuantizedCacheSettings {
  if (targets === undefined) return settings;
  const numLayers = config.geometry.numLayers;
  const outside = (targets.layers ?? []).find((layer) => layer >= numLayers);
  if (outside !== undefined) throw new UsageError(`--quantize-layers names layer ${outside}, but the model has layers 0…${numLayers - 1}.`);
  return targetedQuantization({ quantization: settings, targets }, numLayers);
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
 * `--write-layer-map FILE`: the cache plan written back: every layer's resolved bits (shorthands,
 * layer map, K/V bits, nbits, the lab's targets), `full` for a full-precision layer or side, as a
 * complete KVTuner preset (YAML) or JSON, for the layers that keep a KV cache.
 */
function writeLayerMap(io: CliIo, path: string, config: ModelConfig, settings: QuantizedCacheSettings): void {
  const withCache = new Set(config.layers.layers.flatMap((layer, index) => (layer.hasKvCache ? [index] : [])));
  const map = resolvedLayerMap(settings, config.geometry.numLayers).filter((entry) => withCache.has(entry.layer));
  io.writeFileAtomic(path, encodeUtf8(formatLayerMap(map, layerMapFormatOf(path))));
}

const KV_DTYPES: readonly KvDtype[] = ['float16', 'float32'];

/**
 * `--context N[,N…]` (with `--prompt-tokens`, `--kv-dtype`): the memory what-if at each length, from
 * app/accounting (the run panel's arithmetic). Null without --context; the other two alone are refused.
 */
function whatIfOption(options: RawOptions, config: ModelConfig, settings: QuantizedCacheSettings): { lines: WhatIfLine[]; kvDtype: KvDtype } | null {
  const text = optionalString(options, 'context');
  if (text === undefined) {
    const stray = ['prompt-tokens', 'kv-dtype'].find((name) => options[name] !== undefined);
    if (stray !== undefined) throw new UsageError(`--${stray} sets the memory what-if, which --context asks for; add --context N[,N…] (tokens).`);
    return null;
  }
  const parts = text.split(',').map((s) => s.trim());
  if (parts.some((p) => !/^\d+$/.test(p) || Number(p) < 1 || Number(p) > MAX_WHAT_IF_CONTEXT)) {
    throw new UsageError(`--context must be context lengths in tokens from 1 to ${MAX_WHAT_IF_CONTEXT} (1M), separated by commas; got ${JSON.stringify(text.slice(0, 200))}.`);
  }
  const contexts = parts.map(Number);
  const promptTokens = integerOption(options, 'prompt-tokens', Math.min(...contexts));
  if (promptTokens < 1 || promptTokens > Math.min(...contexts)) {
    throw new UsageError(`--prompt-tokens must be from 1 to the shortest --context (${Math.min(...contexts)}); got ${promptTokens}.`);
  }
  const kvDtype = choiceOption(options, 'kv-dtype', KV_DTYPES, 'float16');
  return { lines: whatIfLines(config, settings, kvDtype, promptTokens, contexts), kvDtype };
}

function sequenceLengthsOption(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const parts = text.split(',').map((s) => s.trim());
  if (parts.some((p) => !/^\d+$/.test(p) || Number(p) < 1)) {
    throw new UsageError(`--seq-len must be positive integers separated by commas, got ${JSON.stringify(text)}.`);
  }
  return parts.map(Number);
}

function formatPreflight(config: ModelConfig, s: QuantizedCacheSettings, r: PreflightResult, check: ModelCheck | null): string {
  const g = config.geometry;
  const modelDiagnostics = check?.diagnostics ?? [];
  const ok = r.ok && !modelDiagnostics.some((d) => d.severity === 'error');
  const lines = [
    `${config.sourceName}`,
    ...layoutLines(check),
    `  ${config.modelType ?? 'unknown model_type'}: ${g.numLayers} layers, ${g.numAttentionHeads} heads, ${g.numKeyValueHeads} KV heads, head_dim ${g.headDim}`,
    `  layer types (transformers): ${summarizeTypes(r.layerTypes)}`,
    `  quantized layers: ${layerRange(r.layers.filter((l) => l.quantized).map((l) => l.index), g.numLayers)}`,
    `  QuantizedCache(backend=${JSON.stringify(String(s.backend))}, nbits=${s.nbits}, axis_key=${s.axisKey}, axis_value=${s.axisValue}, ` +
      `q_group_size=${s.groupSize}, residual_length=${s.residualLength}), layer policy ${s.layerPolicy}`,
    ...activeExtensions(s, g.numLayers).map((item, index) => `${index === 0 ? `  ${EXTENSIONS_HEADING}: ` : '    '}${item.label}: ${item.detail}`),
    '',
    ok ? 'OK: a quantized-cache run can start.' : 'REFUSED: a quantized-cache run cannot start.',
  ];
  for (const d of [...r.diagnostics, ...modelDiagnostics]) lines.push('', ...formatDiagnostic(d));
  return lines.join('\n') + '\n';
}

function layoutLines(check: ModelCheck | null): string[] {
  const layout = check?.layout;
  if (layout === null || layout === undefined) return [];
  const size = layout.bytes === null ? '' : `, ${formatBytes(layout.bytes)}${layout.externalData.length > 0 ? ` with ${layout.externalData.join(', ')}` : ''}`;
  return [
    `  layout: ${layout.label}${layout.crossCheck !== null ? `; ${layout.crossCheck} cross-checked` : ''}`,
    `  graph: ${layout.graphs.join(' then ')}: ${layout.precision ?? 'unread'}${size}; I/O names: ${layout.naming ?? 'unread'}${layout.kvPacking === 'combined' ? ' (combined past)' : ''}`,
  ];
}

function formatDiagnostic(d: Pick<Diagnostic, 'code' | 'severity' | 'message' | 'layers' | 'fix'> | ModelDiagnostic): string[] {
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
