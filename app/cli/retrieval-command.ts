import type { GenerationResult } from '../engine/generation-result.js';
import type { PromptFormat, RunSettings } from '../engine/types.js';
import { accuracyMap, retrievalGrid, type AccuracyMap, type SampleOutcome } from '../lab/retrieval/grid.js';
import { retrievalTask, type RetrievalTask } from '../lab/retrieval/registry.js';
import { RetrievalTaskError, type CountTokens } from '../lab/retrieval/retrieval-task.js';
import { scorePrediction } from '../lab/retrieval/score.js';
import { stringifyJson } from '../protocol/json-numbers.js';
import { RunError } from '../protocol/run-error.js';
import type { StartRun } from '../protocol/run-handle.js';
import { encodeUtf8 } from '../record/utf8.js';
import { EXTENSION_FLAGS } from './extension-options.js';
import { ExitCode, UsageError, type CliIo } from './io.js';
import { checkOutputFolder } from './output-folder.js';
import { integerOption, optionalString, requireString, type RawOptions } from './options.js';
import type { OptionSpecTable } from './option-specs.js';
import { runSettingsFromOptions } from './run-command.js';

/**
 * `kvscope eval --task passkey|niah-…`: long-context retrieval on the depth × length grid
 * (docs/retrieval.md). Each sample is generated offline from its seed, fitted to the length with the
 * model's own tokenizer, and run as `kvscope run` runs a prompt (prefill with the chosen cache, then
 * greedy decoding); the decoded text is scored as RULER scores it, and the cells' accuracies printed
 * as a map. As RULER, the length holds the prompt and the tokens to generate, so the prompt is fitted
 * to length − max new tokens.
 */
export interface RetrievalCommandRuntime {
  /** Counts tokens as a run encodes a prompt in this format with this model's tokenizer (BOS included, or the chat template's tokens). */
  countTokens(model: string, format: PromptFormat): Promise<CountTokens>;
  readonly startRun: StartRun;
  /** Calls `onInterrupt` on Ctrl-C; the returned function stops listening. */
  onInterrupt(onInterrupt: () => void): () => void;
  /** milliseconds on a monotonic clock: each cell's line says how long it took */
  nowMs(): number;
  /** hex sha256 of a text's UTF-8 bytes: the record names each prompt by its digest */
  sha256(text: string): string;
  /** when the record was made, and by which kvscope */
  now(): Date;
  readonly kvscopeVersion: string;
}

/** The options only a retrieval eval takes (main/cli adds them to eval's; and a sweep takes them as keys: app/cli/sweep-retrieval.ts). */
export const RETRIEVAL_OPTION_SPECS = {
  task: { type: 'string' },
  lengths: { type: 'string' },
  depths: { type: 'string' },
  samples: { type: 'string' },
  seed: { type: 'string' },
  'max-new-tokens': { type: 'string' },
  chat: { type: 'boolean' },
} as const satisfies OptionSpecTable;

/** eval's text and window options, which mean nothing to a generated prompt. */
const TEXT_OPTIONS = ['text', 'text-ids', 'context', 'stride', 'prefill', 'windows', 'feed', 'quantize-layers', 'quantize-parts', 'per-token'] as const;
/** What a retrieval eval hands to `run`'s settings: the model and the cache, kvscope's extensions (--kv-format …) included. */
const RUN_OPTIONS = ['model', 'onnx', 'ep', 'cache', 'backend', 'nbits', 'axis-key', 'axis-value', 'group-size', 'residual-length', 'layer-policy', 'dequantize', ...EXTENSION_FLAGS] as const;
const DEFAULT_DEPTHS = [0, 25, 50, 75, 100];

export interface RetrievalSampleJson extends SampleOutcome {
  readonly seed: number;
  readonly promptTokens: number;
  readonly answers: readonly string[];
  /** sha256 of the prompt's UTF-8 text, which the seed, length, depth and tokenizer reproduce */
  readonly promptSha256: string;
  /** the inserted facts, the one at the depth first */
  readonly needles: readonly string[];
  /** what the chosen cache decoded, and its score in [0, 1] */
  readonly prediction: string;
  /** the chosen cache's stored bytes at the run's end (prompt and decoded tokens), all layers */
  readonly kvBytes: number;
  /** the full-precision dynamic cache on the same prompt (absent when the chosen cache is dynamic) */
  readonly referencePrediction?: string;
  readonly referenceScore?: number;
  readonly referenceKvBytes?: number;
}

/** What one retrieval evaluation found: the record's body (the CLI's --out and a sweep point's retrieval.json hold it). */
export interface RetrievalEvalResult {
  readonly task: string;
  readonly metric: string;
  readonly promptFormat: PromptFormat;
  readonly maxNewTokens: number;
  readonly seed: number;
  readonly model: GenerationResult['model'] | undefined;
  readonly cache: RunSettings['cacheMode'];
  readonly quantization: RunSettings['quantization'] | null;
  readonly map: AccuracyMap;
  /** the full-precision dynamic cache's map on the same prompts (null when the chosen cache is dynamic) */
  readonly referenceMap: AccuracyMap | null;
  readonly samples: readonly RetrievalSampleJson[];
}

/** A full-precision decode of one prompt, as the reference gives it. */
export interface ReferenceDecode {
  readonly text: string;
  readonly kvBytes: number;
}

/**
 * Where reference decodes are kept between evaluations: a sweep shares one store across its points,
 * so the dynamic cache decodes each prompt once per sweep, not once per point. `key` names the
 * reference's settings and the prompt (its digest).
 */
export interface ReferenceStore {
  get(key: string): ReferenceDecode | undefined;
  set(key: string, decode: ReferenceDecode): void;
}

/** Stops an evaluation: `cancel` is called on Ctrl-C (the CLI's, or the sweep's). */
export interface RetrievalControl {
  readonly cancelled: () => boolean;
  /** the run in flight, so a cancel reaches it */
  running?: { cancel(): void } | undefined;
}

export interface RetrievalPlan {
  readonly task: RetrievalTask;
  readonly maxNewTokens: number;
  readonly seed: number;
  readonly cells: readonly ReturnType<typeof retrievalGrid>[number][];
  readonly format: PromptFormat;
  readonly base: RunSettings;
  readonly reference: RunSettings | null;
  readonly model: string;
}

/** Checks a retrieval eval's options (the CLI's, or a sweep point's) and resolves them into what runs; UsageError when they are bad. */
export function retrievalPlan(options: RawOptions, io: CliIo): RetrievalPlan {
  const task = taskOption(options);
  const given = TEXT_OPTIONS.filter((name) => options[name] !== undefined);
  if (given.length > 0) {
    throw new UsageError(`--${given[0]} is an option of the text evaluation; with --task the prompts are generated. Drop --${given[0]}.`);
  }
  const maxNewTokens = integerOption(options, 'max-new-tokens', task.tokensToGenerate);
  if (maxNewTokens < 1) throw new UsageError(`--max-new-tokens must be at least 1, got ${maxNewTokens}.`);
  const lengths = listOption(options, 'lengths', null, parseLength);
  const depths = task.hasDepth ? listOption(options, 'depths', DEFAULT_DEPTHS, parseDepth) : [];
  if (!task.hasDepth && options['depths'] !== undefined) throw new UsageError(`--depths places a needle; ${task.name} has none. Drop --depths.`);
  const samples = integerOption(options, 'samples', 1);
  const seed = integerOption(options, 'seed', 0);
  const tooShort = lengths.find((length) => length <= maxNewTokens);
  if (tooShort !== undefined) throw new UsageError(`--lengths ${tooShort} leaves no room for the prompt beside ${maxNewTokens} new tokens; give lengths above ${maxNewTokens}.`);
  const cells = gridOrUsage(() => retrievalGrid({ lengths, depths, samples, seed, hasDepth: task.hasDepth }));
  // --chat: every prompt one user turn through the model's chat template, as `run --chat` sends it
  const format: PromptFormat = options['chat'] === true ? 'chat' : 'text';
  const chat = format === 'chat' ? { chat: true } : {};
  const runOptions = Object.fromEntries(RUN_OPTIONS.filter((name) => options[name] !== undefined).map((name) => [name, options[name]]));
  const base = runSettingsFromOptions({ ...runOptions, ...chat, 'max-new-tokens': String(maxNewTokens), greedy: true }, io);
  // The full-precision dynamic cache on the same prompts, as `kvscope eval` compares every cache with it.
  const reference = base.cacheMode === 'dynamic' ? null : runSettingsFromOptions({
    ...Object.fromEntries(['model', 'onnx', 'ep'].filter((name) => options[name] !== undefined).map((name) => [name, options[name]])),
    ...chat, cache: 'dynamic', 'max-new-tokens': String(maxNewTokens), greedy: true,
  }, io);
  return { task, maxNewTokens, seed, cells, format, base, reference, model: requireString(options, 'model') };
}

/**
 * Runs a plan's samples (the longest length first) and scores them; null when cancelled. Each cell's
 * line goes to stderr under `prefix`. A RunError (a refused length) propagates.
 */
export async function evaluateRetrieval(
  plan: RetrievalPlan, io: CliIo, runtime: RetrievalCommandRuntime, control: RetrievalControl,
  options: { readonly prefix?: string; readonly referenceStore?: ReferenceStore } = {},
): Promise<RetrievalEvalResult | null> {
  const { task, maxNewTokens, cells, format, base, reference } = plan;
  const prefix = options.prefix ?? 'kvscope eval';
  const countTokens = await runtime.countTokens(plan.model, format).catch((error: unknown) => {
    // a folder without tokenizer.json: the prompts cannot be fitted; its own fix said with it
    const fix = (error as { fix?: unknown }).fix;
    const why = format === 'chat' ? 'kvscope eval --task --chat fits each prompt as the chat template renders it' : 'kvscope eval --task fits each prompt with the model\'s tokenizer';
    throw typeof fix === 'string' ? new UsageError(`${(error as Error).message} ${fix} (${why}.)`) : error;
  });
  let model: GenerationResult['model'] | undefined;
  /** One greedy run's decoded text and stored KV bytes, or null when it was cancelled. */
  const decode = async (settings: RunSettings, prompt: string): Promise<ReferenceDecode | null> => {
    const handle = runtime.startRun({ ...settings, prompt }, {});
    control.running = handle;
    let result: GenerationResult;
    try {
      result = await handle.done;
    } finally {
      control.running = undefined;
      handle.dispose();
    }
    model ??= result.model;
    return result.stopReason === 'cancelled' || control.cancelled() ? null : { text: result.text, kvBytes: result.kvBytesTotal.totalBytes };
  };
  // the reference's settings name its decodes in a shared store: the same prompt under the same settings decodes alike
  const referenceKey = reference === null ? '' : stringifyJson(reference);
  const decodeReference = async (settings: RunSettings, prompt: string, digest: string): Promise<ReferenceDecode | null> => {
    const key = `${referenceKey}\n${digest}`;
    const stored = options.referenceStore?.get(key);
    if (stored !== undefined) return stored;
    const decoded = await decode(settings, prompt);
    if (decoded !== null) options.referenceStore?.set(key, decoded);
    return decoded;
  };
  const outcomes: RetrievalSampleJson[] = [];
  // the longest length first: a length past the model's positions or this machine's prefill memory is
  // refused by its first run, before the shorter cells have taken minutes (the maps keep the grid's order)
  const order = [...cells].sort((a, b) => b.length - a.length);
  for (const cell of order) {
    const cellStart = runtime.nowMs();
    for (const sampleSeed of cell.sampleSeeds) {
      if (control.cancelled()) return null;
      const sample = sampleOrUsage(() => task.generate({ seed: sampleSeed, targetTokens: cell.length - maxNewTokens, sequenceTokens: cell.length, depthPercent: cell.depth ?? 0, countTokens }), maxNewTokens);
      const digest = runtime.sha256(sample.prompt);
      const chosen = await decode(base, sample.prompt);
      if (chosen === null) return null;
      const dynamic = reference === null ? null : await decodeReference(reference, sample.prompt, digest);
      if (reference !== null && dynamic === null) return null;
      outcomes.push({
        length: cell.length, depth: cell.depth, seed: sampleSeed, promptTokens: sample.promptTokens, answers: sample.answers,
        promptSha256: digest,
        needles: [...sample.needles].sort((a, b) => Number(b.atDepth) - Number(a.atDepth)).map((needle) => needle.text),
        prediction: chosen.text, score: scorePrediction(task.metric, chosen.text, sample.answers), kvBytes: chosen.kvBytes,
        ...(dynamic === null ? {} : {
          referencePrediction: dynamic.text, referenceScore: scorePrediction(task.metric, dynamic.text, sample.answers), referenceKvBytes: dynamic.kvBytes,
        }),
      });
    }
    const done = outcomes.filter((outcome) => outcome.length === cell.length && outcome.depth === cell.depth);
    io.stderr(cellLine(prefix, task, cell.length, cell.depth, done, runtime.nowMs() - cellStart));
  }
  // the record lists the samples in the grid's order, whatever order they ran in
  const place = (outcome: RetrievalSampleJson) => cells.findIndex((cell) => cell.length === outcome.length && cell.depth === outcome.depth);
  outcomes.sort((a, b) => place(a) - place(b));
  const map = accuracyMap(cells, outcomes);
  const referenceMap = reference === null ? null : accuracyMap(cells, outcomes.map((outcome) => ({ ...outcome, score: outcome.referenceScore! })));
  return {
    task: task.name, metric: task.metric, promptFormat: format, maxNewTokens, seed: plan.seed, model, cache: base.cacheMode,
    quantization: base.cacheMode === 'quantized' ? base.quantization : null, map, referenceMap, samples: outcomes,
  };
}

/**
 * The run's refusal in a retrieval eval's terms: its prompt-length refusal says to shorten --lengths
 * (the prompts are generated), else the run's own fix.
 */
export function retrievalRunErrorFix(error: RunError, maxNewTokens: number): string | undefined {
  return lengthsFix(error.message, maxNewTokens) ?? error.fix;
}

export async function runRetrievalCommand(options: RawOptions, io: CliIo, runtime: RetrievalCommandRuntime): Promise<ExitCode> {
  taskOption(options);
  const out = optionalString(options, 'out');
  if (out !== undefined) {
    if (io.checkOutputPath !== undefined) io.checkOutputPath(out, '--out');
    else checkOutputFolder(io, out);
  }
  const plan = retrievalPlan(options, io);
  const { task, maxNewTokens, reference } = plan;
  const json = options['json'] === true;

  let cancelled = false;
  const control: RetrievalControl = { cancelled: () => cancelled };
  const stopListening = runtime.onInterrupt(() => {
    cancelled = true;
    io.stderr('\nkvscope eval: cancelling (nothing will be printed)…\n');
    control.running?.cancel();
  });
  try {
    const result = await evaluateRetrieval(plan, io, runtime, control);
    if (result === null) return ExitCode.badInput;
    const { map, referenceMap } = result;
    let recordError: string | undefined;
    if (out !== undefined) {
      const record = retrievalRecord(result, runtime);
      try {
        io.writeFileAtomic(out, encodeUtf8(stringifyJson(record, 2) + '\n'));
      } catch (error) {
        // checked before the runs, yet the write failed (a full disk): the maps are still printed, and the command fails
        recordError = `the evaluation finished but its record could not be written: ${(error as Error).message.split('\n')[0]}`;
      }
    }
    const wrote = out !== undefined && recordError === undefined;
    if (json) {
      io.stdout(stringifyJson({ ok: recordError === undefined, ...result, ...(wrote ? { record: out } : {}), ...(recordError === undefined ? {} : { recordError }) }) + '\n');
    } else {
      io.stdout(formatAccuracyMap(task, map, reference === null ? 'the dynamic cache' : 'the quantized cache'));
      if (referenceMap !== null) {
        io.stdout(formatAccuracyMap(task, referenceMap, 'the full-precision dynamic cache'));
        io.stdout(formatAccuracyMap(task, differenceMap(map, referenceMap), 'quantized − dynamic', true));
      }
      if (wrote) io.stdout(`wrote ${out}\n`);
    }
    if (recordError === undefined) return ExitCode.ok;
    io.stderr(`kvscope eval: ${recordError} Free space on that disk (or choose another --out) and run again; the maps above are complete.\n`);
    return ExitCode.badInput;
  } catch (error) {
    if (!(error instanceof RunError)) throw error;
    if (json) io.stdout(stringifyJson({ ok: false, error: error.toPayload() }) + '\n');
    const fixText = retrievalRunErrorFix(error, maxNewTokens);
    const fix = fixText !== undefined && !error.message.includes(fixText) ? `\n  fix: ${fixText}` : '';
    io.stderr(`kvscope eval: ${error.message}${fix}\n`);
    return error.code === 'refused' ? ExitCode.refused : ExitCode.badInput;
  } finally {
    stopListening();
  }
}

/** The record `--out` writes (and a sweep point's retrieval.json). */
export type RetrievalRecord = { readonly kind: 'kvscope-retrieval'; readonly kvscopeVersion: string; readonly createdAt: string } & RetrievalEvalResult;

export function retrievalRecord(result: RetrievalEvalResult, runtime: Pick<RetrievalCommandRuntime, 'kvscopeVersion' | 'now'>): RetrievalRecord {
  return { kind: 'kvscope-retrieval', kvscopeVersion: runtime.kvscopeVersion, createdAt: runtime.now().toISOString(), ...result };
}

/** Rows are depths, columns lengths; each cell the mean score of its samples (RULER's mean, as a fraction). */
export function formatAccuracyMap(task: RetrievalTask, map: AccuracyMap, what: string, signed = false): string {
  const header = [task.hasDepth ? 'depth \\ length' : 'length', ...map.lengths.map(String)];
  const rows = map.depths.map((depth, r) => [depth === null ? 'accuracy' : `${depth} %`, ...map.accuracy[r]!.map((value) => (value === null ? '–' : formatScore(value, signed)))]);
  const widths = header.map((_, c) => Math.max(...[header, ...rows].map((row) => row[c]!.length)));
  const line = (row: string[]) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  return `${task.name} (${task.metric}), ${signed ? 'accuracy difference' : 'accuracy'} per cell, ${what}\n${[header, ...rows].map(line).join('\n')}\n`;
}

/** The chosen cache's accuracy minus the dynamic cache's, cell by cell (null where either has none). */
export function differenceMap(map: AccuracyMap, reference: AccuracyMap): AccuracyMap {
  const accuracy = map.accuracy.map((row, r) => row.map((value, c) => {
    const base = reference.accuracy[r]![c]!;
    return value === null || base === null ? null : value - base;
  }));
  return { ...map, accuracy };
}

function cellLine(prefix: string, task: RetrievalTask, length: number, depth: number | null, done: readonly RetrievalSampleJson[], elapsedMs: number): string {
  const where = `${task.name} length ${length}${depth === null ? '' : `, depth ${depth} %`}`;
  const score = formatScore(mean(done.map((outcome) => outcome.score)));
  const reference = done[0]?.referenceScore === undefined ? '' : ` (dynamic ${formatScore(mean(done.map((outcome) => outcome.referenceScore!)))})`;
  return `${prefix}: ${where}: ${score}${reference} over ${done.length} sample${done.length === 1 ? '' : 's'} in ${(elapsedMs / 1000).toFixed(1)} s\n`;
}

function formatScore(value: number, signed = false): string {
  const text = value.toFixed(2);
  return signed && value >= 0 ? `+${text}` : text;
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function taskOption(options: RawOptions): RetrievalTask {
  try {
    return retrievalTask(requireString(options, 'task'));
  } catch (error) {
    if (error instanceof RetrievalTaskError) throw new UsageError(`--task: ${error.message}.`);
    throw error;
  }
}

function gridOrUsage<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof RetrievalTaskError) throw new UsageError(`${error.message}.`);
    throw error;
  }
}

/** A generator's refusal (a length below the bare prompt) is the user's to fix: said as usage, in --lengths' terms. */
function sampleOrUsage<T>(make: () => T, maxNewTokens: number): T {
  try {
    return make();
  } catch (error) {
    if (!(error instanceof RetrievalTaskError)) throw error;
    if (error.leastTargetTokens === undefined) throw new UsageError(`${error.message}.`);
    throw new UsageError(`${error.message.replace(/; give a length of at least \d+$/, '')}; a --lengths value holds the prompt and the ${maxNewTokens} new tokens, so give lengths of at least ${error.leastTargetTokens + maxNewTokens}.`);
  }
}

/**
 * The run's prompt-length refusal (app/engine/prompt-length.ts) says what to change in `run`'s terms
 * (shorten the prompt, --allow-past-positions, which eval --task does not take); here the prompt is
 * generated, so the fix is a shorter --lengths value.
 */
function lengthsFix(message: string, maxNewTokens: number): string | undefined {
  if (!message.includes('The run was not started.')) return undefined;
  const positions = /max_position_embeddings = (\d+)/.exec(message);
  if (positions !== null) {
    return `Give --lengths of at most ${positions[1]}: a length holds the prompt and the ${maxNewTokens} new tokens, and the model has ${positions[1]} positions.`;
  }
  const memory = /prefilling more than (\d+) tokens/.exec(message);
  if (memory !== null) {
    return `Give --lengths of at most ${Number(memory[1]) + maxNewTokens}: a longer prompt needs more memory to prefill than a run may take on this machine.`;
  }
  return undefined;
}

/** "1024", "4k" (× 1024, as the issue writes lengths). */
function parseLength(text: string): number | null {
  const match = /^(\d+)(k?)$/i.exec(text);
  if (match === null) return null;
  return Number(match[1]) * (match[2] === '' ? 1 : 1024);
}

function parseDepth(text: string): number | null {
  return /^\d+(\.\d+)?$/.test(text) ? Number(text) : null;
}

function listOption(options: RawOptions, name: string, fallback: readonly number[] | null, parse: (text: string) => number | null): number[] {
  const text = optionalString(options, name);
  if (text === undefined) {
    if (fallback === null) throw new UsageError(`--${name} is required with --task (comma-separated, e.g. --${name} 1k,2k,4k).`);
    return [...fallback];
  }
  const parts = text.split(',').map((part) => part.trim());
  const values = parts.map(parse);
  const bad = parts.find((_, i) => values[i] === null);
  if (bad !== undefined) throw new UsageError(`--${name} must be numbers separated by commas${name === 'lengths' ? ' (1024 or 1k)' : ''}; got ${JSON.stringify(bad)} in ${JSON.stringify(text)}.`);
  return values as number[];
}
