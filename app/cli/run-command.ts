import type { LayerMemory } from '../cache/layer-memory.js';
import { checkSamplingSettings } from '../engine/sampler.js';
import type { GenerationResult, LayerQuantizeError } from '../engine/generation-result.js';
import { DEQUANTIZE_PATHS, EXECUTION_PROVIDERS, type CacheMode, type DequantizePath, type ReferenceSummary, type RunSettings, type SamplingSettings } from '../engine/types.js';
import { stringifyJson } from '../protocol/json-numbers.js';
import type { RunErrorPayload } from '../protocol/messages.js';
import { RunError } from '../protocol/run-error.js';
import type { StartRun } from '../protocol/run-handle.js';
import { createRunRecord, newRunId, serializeRunRecord } from '../record/run-record.js';
import { runRecordToCsv } from '../record/run-record-csv.js';
import { encodeUtf8 } from '../record/utf8.js';
import { SYNTHETIC_MODEL_KINDS } from '../synthetic/synthetic-spec.js';
import { formatBytes } from './byte-size.js';
import { ExitCode, UsageError, type CliIo } from './io.js';
import { choiceOption, integerOption, numberOption, optionalString, requireString, type RawOptions } from './options.js';
import { settingsFromOptions } from './preflight-command.js';
import { EXTENSION_FLAGS } from './extension-options.js';
import { activeExtensions, EXTENSIONS_HEADING, type ActiveExtension } from '../cache/active-extensions.js';
import { RunProgress } from './run-progress.js';
import { padPromptToOption } from './pad-prompt-option.js';

/** What `kvscope run` needs beyond files and text: the Node entry runs the generation in a worker thread. */
export interface RunCommandRuntime {
  readonly startRun: StartRun;
  readonly stdoutIsTty: boolean;
  readonly stderrIsTty: boolean;
  readonly kvscopeVersion: string;
  now(): Date;
  /** Calls `onInterrupt` on Ctrl-C (or SIGTERM, named) while a run goes on; the returned function stops listening. */
  onInterrupt(onInterrupt: (signal?: string) => void): () => void;
}

/** transformers' GenerationConfig defaults for sampling (top_k 50, top_p 1.0, temperature 1.0). */
const SAMPLING_DEFAULTS: SamplingSettings = { greedy: false, temperature: 1, topK: 50, topP: 1, seed: 0 };
const SAMPLING_FLAGS = ['temperature', 'top-k', 'top-p', 'seed'] as const;
const QUANTIZATION_FLAGS = ['backend', 'nbits', 'axis-key', 'axis-value', 'group-size', 'residual-length', 'layer-policy', ...EXTENSION_FLAGS] as const;
export const DEFAULT_MAX_NEW_TOKENS = 64;

/**
 * `kvscope run`: one generation in the worker thread, streamed to the terminal, optionally saved as a
 * run record. Exit 0 when the run finished (or was cancelled with Ctrl-C), 2 when the preflight or
 * the model checks refuse it (their message is printed), 1 on bad input or a failed run.
 */
export async function runRunCommand(options: RawOptions, io: CliIo, runtime: RunCommandRuntime): Promise<ExitCode> {
  const settings = runSettingsFromOptions(options, io);
  const json = options['json'] === true;
  const out = optionalString(options, 'out');
  if (out !== undefined) checkOutputFolder(io, out);
  if (settings.refusePastPositions !== true) {
    // Said before the run, not only in its summary: the positions are known once the model is read.
    io.stderr('kvscope run: --allow-past-positions: the run may go past the model\'s max_position_embeddings; the graph runs there, but the model was not trained for those positions (the summary says whether it did).\n');
  }

  // Progress goes to a terminal's stderr, unless the streamed text shares that terminal (the text is
  // the progress then, and a redrawn bar would overwrite it).
  const progress = runtime.stderrIsTty && (json || !runtime.stdoutIsTty) ? new RunProgress(settings.maxNewTokens, io.stderr) : undefined;
  let textEnd = '\n';
  const handle = runtime.startRun(settings, {
    onText: json ? undefined : (delta) => {
      io.stdout(delta);
      if (delta.length > 0) textEnd = delta;
    },
    onMetrics: progress === undefined ? undefined : (steps) => progress.update(steps),
    onQueued: () => io.stderr('kvscope run: waiting for another WebGPU run in this process to finish…\n'),
  });
  let interrupts = 0;
  const stopListening = runtime.onInterrupt((signal) => {
    interrupts++;
    progress?.clear();
    if (interrupts === 1) {
      io.stderr(signal === undefined || signal === 'SIGINT'
        ? '\nkvscope run: cancelling at the next step; the result and --out are still written…\n'
        : `\nkvscope run: ${signal}: cancelling at the next step; the result and --out are still written…\n`);
      handle.cancel();
    } else if (interrupts === 2) {
      // Never dispose here: terminating the worker while onnxruntime's session.run is in flight aborts
      // the whole process natively (Napi::Error, rc 134) and loses the run. The cancel is already on
      // its way; a worker stuck in one step is terminated by the cancel timeout (worker-client.ts).
      io.stderr(`kvscope run: ${signal ?? 'SIGINT'} again: already cancelling; the run ends at the end of its current step and --out is written (SIGKILL stops at once, writing nothing).\n`);
    }
  });
  try {
    const result = await handle.done;
    progress?.clear();
    if (!json && !textEnd.endsWith('\n')) io.stdout('\n');
    let recordPath: string | undefined;
    let recordError: string | undefined;
    try {
      recordPath = out !== undefined ? writeOutput(io, out, result, runtime) : undefined;
    } catch (error) {
      // Checked before the run, yet the write failed (a full disk): the result is still printed, and the command fails.
      recordError = `the run finished but its record could not be written: ${(error as Error).message}`;
    }
    if (json) {
      io.stdout(stringifyJson({ ok: recordError === undefined, ...runJson(result), ...(recordPath !== undefined ? { record: recordPath } : {}), ...(recordError !== undefined ? { recordError } : {}) }) + '\n');
    } else {
      io.stderr(formatSummary(result, recordPath));
    }
    if (recordError === undefined) return ExitCode.ok;
    io.stderr(`kvscope run: ${recordError} The result above is complete; run again with --json to keep it from stdout.\n`);
    return ExitCode.badInput;
  } catch (error) {
    progress?.clear();
    if (!(error instanceof RunError)) throw error;
    return reportRunError(error, json, io);
  } finally {
    stopListening();
    handle.dispose();
  }
}

/** The flags as RunSettings; every check that needs no model happens here, before a worker starts. */
export function runSettingsFromOptions(options: RawOptions, io: CliIo): RunSettings {
  const model = requireString(options, 'model');
  const isGraph = model.toLowerCase().endsWith('.onnx') && (io.isFile?.(model) ?? true);
  if (!(SYNTHETIC_MODEL_KINDS as readonly string[]).includes(model) && !io.isDirectory(model) && !isGraph) {
    throw new UsageError(`--model ${model} is neither a folder nor an .onnx file. Pass a model folder (config.json or genai_config.json, ` +
      `its .onnx graph, tokenizer.json), a graph.onnx with its config beside it, or ${SYNTHETIC_MODEL_KINDS.join(' | ')}.`);
  }
  const cacheMode = choiceOption<CacheMode>(options, 'cache', ['dynamic', 'quantized'], 'quantized');
  const quantizationFlags = QUANTIZATION_FLAGS.filter((flag) => options[flag] !== undefined);
  if (cacheMode === 'dynamic' && quantizationFlags.length > 0) {
    throw new UsageError(`--${quantizationFlags[0]} configures the quantized cache; it has no effect with --cache dynamic. Drop it or use --cache quantized.`);
  }
  const maxNewTokens = integerOption(options, 'max-new-tokens', DEFAULT_MAX_NEW_TOKENS);
  if (maxNewTokens < 1) throw new UsageError(`--max-new-tokens must be at least 1, got ${maxNewTokens}.`);
  const onnxFile = optionalString(options, 'onnx');
  if (onnxFile !== undefined && isGraph) throw new UsageError(`--onnx ${onnxFile} picks a graph of a folder, but --model already names one (${model}). Drop one of them.`);
  const promptTokenIds = promptIdsOption(options);
  const dequantize = options['dequantize'] === undefined ? undefined : choiceOption<DequantizePath>(options, 'dequantize', DEQUANTIZE_PATHS);
  if (cacheMode === 'dynamic' && dequantize !== undefined) {
    throw new UsageError('--dequantize says where the quantized cache is dequantized; it has no effect with --cache dynamic. Drop it or use --cache quantized.');
  }
  const padPromptTo = padPromptToOption(options);
  return {
    model,
    ...(onnxFile !== undefined ? { onnxFile } : {}),
    executionProvider: choiceOption(options, 'ep', EXECUTION_PROVIDERS, 'cpu'),
    cacheMode,
    quantization: settingsFromOptions(options, io),
    prompt: optionalString(options, 'prompt') ?? '',
    ...(options['chat'] === true ? { promptFormat: 'chat' as const } : {}),
    ...(promptTokenIds !== undefined ? { promptTokenIds } : {}),
    ...(padPromptTo !== undefined ? { padPromptTo } : {}),
    maxNewTokens,
    sampling: samplingFromOptions(options),
    reference: options['reference'] === true,
    ...(dequantize !== undefined ? { dequantize } : {}),
    ...(options['ignore-eos'] === true ? { ignoreEos: true } : {}),
    // Positions past max_position_embeddings are refused before the prompt is encoded, unless asked for.
    ...(options['allow-past-positions'] === true ? {} : { refusePastPositions: true }),
  };
}

/** `--prompt-ids 1,2,3`: the prompt as token ids, for folders without a tokenizer (the text is then shown as ids). */
function promptIdsOption(options: RawOptions): number[] | undefined {
  const text = optionalString(options, 'prompt-ids');
  if (text === undefined) return undefined;
  for (const flag of ['prompt', 'chat'] as const) {
    if (options[flag] !== undefined) throw new UsageError(`--prompt-ids gives the prompt as token ids; --${flag === 'prompt' ? 'prompt (or --prompt-file)' : flag} gives it as text. Use one or the other.`);
  }
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length === 0 || parts.some((part) => !/^\d+$/.test(part))) {
    throw new UsageError(`--prompt-ids must be token ids (non-negative integers) separated by commas, e.g. --prompt-ids 1,15043,727; got ${JSON.stringify(text)}.`);
  }
  return parts.map(Number);
}

function samplingFromOptions(options: RawOptions): SamplingSettings {
  const given = SAMPLING_FLAGS.filter((flag) => options[flag] !== undefined);
  if (options['greedy'] === true && given.length > 0) {
    throw new UsageError(`--greedy picks the most likely token; --${given[0]} only applies to sampling. Use one or the other.`);
  }
  if (given.length === 0) return { ...SAMPLING_DEFAULTS, greedy: true };
  const sampling: SamplingSettings = {
    greedy: false,
    temperature: numberOption(options, 'temperature', SAMPLING_DEFAULTS.temperature),
    topK: integerOption(options, 'top-k', SAMPLING_DEFAULTS.topK),
    topP: numberOption(options, 'top-p', SAMPLING_DEFAULTS.topP),
    seed: integerOption(options, 'seed', SAMPLING_DEFAULTS.seed),
  };
  // The engine's own check, with transformers' messages: refused here, before a worker starts.
  checkSamplingSettings(sampling);
  return sampling;
}

/** Fail before a long run, not after it: the record's folder must exist (and, on a real file system, be writable). */
function checkOutputFolder(io: CliIo, out: string): void {
  if (io.checkOutputPath !== undefined) {
    io.checkOutputPath(out, '--out');
    return;
  }
  const cut = Math.max(out.lastIndexOf('/'), out.lastIndexOf('\\'));
  const folder = cut < 0 ? '.' : cut === 0 ? out.slice(0, 1) : out.slice(0, cut);
  if (!io.isDirectory(folder)) throw new UsageError(`--out ${out}: the folder ${folder} does not exist. Create it first.`);
}

/** `--out x.csv` writes the per-step CSV; any other name the JSON run record. */
function writeOutput(io: CliIo, out: string, result: GenerationResult, runtime: RunCommandRuntime): string {
  const createdAt = runtime.now();
  const record = createRunRecord(result, { id: newRunId(createdAt), createdAt, kvscopeVersion: runtime.kvscopeVersion });
  const text = out.toLowerCase().endsWith('.csv') ? runRecordToCsv(record) : serializeRunRecord(record);
  io.writeFileAtomic(out, encodeUtf8(text));
  return out;
}

function reportRunError(error: RunError, json: boolean, io: CliIo): ExitCode {
  const payload: RunErrorPayload = error.toPayload();
  if (json) io.stdout(stringifyJson({ ok: false, error: payload }) + '\n');
  const fix = error.fix !== undefined && !error.message.includes(error.fix) ? `\n  fix: ${error.fix}` : '';
  io.stderr(`kvscope run: ${error.message}${fix}\n`);
  return error.code === 'refused' ? ExitCode.refused : ExitCode.badInput;
}

/** Stored bytes of the whole cache, by component. */
export type KvBytesJson = Pick<LayerMemory, 'codeBytes' | 'metadataBytes' | 'fullPrecisionBytes' | 'totalBytes' | 'workingBytes'>;

/** The `--json` contract of `kvscope run` (docs/run-record.md, "CLI --json"). */
export interface RunJson {
  readonly tokens: readonly number[];
  readonly promptTokens: readonly number[];
  readonly text: string;
  readonly stopReason: string;
  readonly executionProvider: string;
  readonly ortVersion: string;
  /** per decoder layer: flushes (the prefill's quantize is not one); null where the layer keeps no KV cache */
  readonly flushes: readonly (number | null)[];
  readonly kvBytes: KvBytesJson;
  readonly kvBytesPerLayer: readonly (LayerMemory | null)[];
  readonly baselineBytes: { readonly fp16: number; readonly fp32: number };
  /** per decoder layer: K and V error of the last quantize event; null for unquantized layers */
  readonly error: readonly (LayerQuantizeError | null)[];
  readonly timings: GenerationResult['timings'];
  readonly reference?: ReferenceSummary | null;
  /** the kvscope extensions that made this run differ from transformers' QuantizedCache; absent when none */
  readonly extensions?: readonly ActiveExtension[];
  /** quantized runs: where the cache was dequantized (`graph` or `host`) */
  readonly dequantize?: DequantizePath;
}

export function runJson(result: GenerationResult): RunJson {
  const total = result.kvBytesTotal;
  return {
    tokens: result.generatedTokenIds,
    promptTokens: result.promptTokenIds,
    text: result.text,
    stopReason: result.stopReason,
    executionProvider: result.executionProvider,
    ortVersion: result.ortVersion,
    flushes: result.flushCounts,
    kvBytes: {
      codeBytes: total.codeBytes, metadataBytes: total.metadataBytes, fullPrecisionBytes: total.fullPrecisionBytes, totalBytes: total.totalBytes, workingBytes: total.workingBytes,
    },
    kvBytesPerLayer: result.kvBytes,
    baselineBytes: { fp16: total.fp16BaselineBytes, fp32: total.fp32BaselineBytes },
    error: result.layerErrors,
    timings: result.timings,
    ...(result.settings.reference ? { reference: result.reference } : {}),
    ...withExtensions(result),
    ...(result.dequantize !== undefined ? { dequantize: result.dequantize } : {}),
  };
}

function withExtensions(result: GenerationResult): { extensions?: ActiveExtension[] } {
  const active = result.settings.cacheMode === 'quantized' ? activeExtensions(result.settings.quantization, result.model.numLayers) : [];
  return active.length > 0 ? { extensions: active } : {};
}

function formatSummary(result: GenerationResult, recordPath: string | undefined): string {
  const t = result.timings;
  const kv = result.kvBytesTotal;
  const lines = [
    `-- ${result.generatedTokenIds.length} tokens (${result.stopReason}) on ${result.executionProvider}, onnxruntime ${result.ortVersion}: ` +
      `${t.decodeTokensPerSecond.toFixed(1)} tok/s decode, prefill ${t.prefillMs.toFixed(1)} ms, load ${t.loadMs.toFixed(0)} ms` +
      `${t.rewriteMs === undefined ? '' : ` (the graph rewritten in ${t.rewriteMs.toFixed(0)} ms)`}`,
    `   KV cache ${formatBytes(kv.totalBytes)} stored (codes ${formatBytes(kv.codeBytes)}, scale/zero ${formatBytes(kv.metadataBytes)}, ` +
      `full precision ${formatBytes(kv.fullPrecisionBytes)}) vs fp16 ${formatBytes(kv.fp16BaselineBytes)}, fp32 ${formatBytes(kv.fp32BaselineBytes)}`,
  ];
  for (const item of withExtensions(result).extensions ?? []) lines.push(`   ${EXTENSIONS_HEADING}: ${item.label}: ${item.detail}`);
  if (result.settings.cacheMode === 'quantized') {
    if (result.dequantize !== undefined) lines.push(`   dequantized ${result.dequantize === 'graph' ? 'inside the graph (only codes, scales, zeros and the residual cross into onnxruntime)' : 'on the host (JavaScript feeds every layer\'s history)'}`);
    lines.push(`   flushes per layer: ${result.flushCounts.map((n) => (n === null ? '-' : String(n))).join(' ')}`);
    const errors = result.layerErrors.flatMap((e) => (e === null ? [] : [`${e.layer}: K ${e.key.relFroErr.toExponential(2)} V ${e.value.relFroErr.toExponential(2)}`]));
    if (errors.length > 0) lines.push(`   rel. error of the last quantize per layer: ${errors.join(', ')}`);
  }
  const r = result.reference;
  if (r !== null) {
    lines.push(`   reference: mean KL ${r.meanKl.toExponential(2)} nats (max ${r.maxKl.toExponential(2)}), top-1 agreement ${(100 * r.top1Agreement).toFixed(1)}%, ` +
      `first divergence ${r.firstDivergenceStep === null ? 'none' : `at step ${r.firstDivergenceStep}`}`);
  }
  for (const d of result.diagnostics) lines.push(`   ${d.severity} [${d.code}]: ${d.message.split('\n')[0]}`);
  if (recordPath !== undefined) lines.push(`   wrote ${recordPath}`);
  return lines.join('\n') + '\n';
}
