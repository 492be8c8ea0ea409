import type { GenerationResult } from '../engine/generation-result.js';
import { accuracyMap, retrievalGrid, type AccuracyMap, type SampleOutcome } from '../lab/retrieval/grid.js';
import { retrievalTask, type RetrievalTask } from '../lab/retrieval/registry.js';
import { RetrievalTaskError, type CountTokens } from '../lab/retrieval/retrieval-task.js';
import { scorePrediction } from '../lab/retrieval/score.js';
import { stringifyJson } from '../protocol/json-numbers.js';
import { RunError } from '../protocol/run-error.js';
import type { StartRun } from '../protocol/run-handle.js';
import { ExitCode, UsageError, type CliIo } from './io.js';
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
  /** Counts tokens as a run encodes a text prompt with this model's tokenizer (BOS included). */
  countTokens(model: string): Promise<CountTokens>;
  readonly startRun: StartRun;
  /** Calls `onInterrupt` on Ctrl-C; the returned function stops listening. */
  onInterrupt(onInterrupt: () => void): () => void;
}

/** The options only a retrieval eval takes (main/cli adds them to eval's; they are not sweep keys yet). */
export const RETRIEVAL_OPTION_SPECS = {
  task: { type: 'string' },
  lengths: { type: 'string' },
  depths: { type: 'string' },
  samples: { type: 'string' },
  seed: { type: 'string' },
  'max-new-tokens': { type: 'string' },
} as const satisfies OptionSpecTable;

/** eval's text and window options, which mean nothing to a generated prompt. */
const TEXT_OPTIONS = ['text', 'text-ids', 'context', 'stride', 'prefill', 'windows', 'feed', 'quantize-layers', 'quantize-parts', 'per-token', 'out'] as const;
/** What a retrieval eval hands to `run`'s settings: the model and the cache. */
const RUN_OPTIONS = ['model', 'onnx', 'ep', 'cache', 'backend', 'nbits', 'axis-key', 'axis-value', 'group-size', 'residual-length', 'layer-policy', 'dequantize'] as const;
const DEFAULT_DEPTHS = [0, 25, 50, 75, 100];

export interface RetrievalSampleJson {
  readonly length: number;
  readonly depth: number | null;
  readonly seed: number;
  readonly promptTokens: number;
  readonly answers: readonly string[];
  readonly prediction: string;
  readonly score: number;
}

export async function runRetrievalCommand(options: RawOptions, io: CliIo, runtime: RetrievalCommandRuntime): Promise<ExitCode> {
  const task = taskOption(options);
  const given = TEXT_OPTIONS.filter((name) => options[name] !== undefined);
  if (given.length > 0) {
    throw new UsageError(`--${given[0]} is an option of the text evaluation; with --task the prompts are generated. Drop --${given[0]}${given[0] === 'out' ? ' (a retrieval eval writes no record yet; use --json)' : ''}.`);
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
  const runOptions = Object.fromEntries(RUN_OPTIONS.filter((name) => options[name] !== undefined).map((name) => [name, options[name]]));
  const base = runSettingsFromOptions({ ...runOptions, 'max-new-tokens': String(maxNewTokens), greedy: true }, io);
  const json = options['json'] === true;

  let cancelled = false;
  let running: { cancel(): void } | undefined;
  const stopListening = runtime.onInterrupt(() => {
    cancelled = true;
    io.stderr('\nkvscope eval: cancelling (nothing will be printed)…\n');
    running?.cancel();
  });
  try {
    const countTokens = await runtime.countTokens(requireString(options, 'model'));
    const outcomes: (SampleOutcome & RetrievalSampleJson)[] = [];
    for (const cell of cells) {
      for (const sampleSeed of cell.sampleSeeds) {
        if (cancelled) return ExitCode.badInput;
        const sample = sampleOrUsage(() => task.generate({ seed: sampleSeed, targetTokens: cell.length - maxNewTokens, depthPercent: cell.depth ?? 0, countTokens }), maxNewTokens);
        const handle = runtime.startRun({ ...base, prompt: sample.prompt }, {});
        running = handle;
        let result: GenerationResult;
        try {
          result = await handle.done;
        } finally {
          running = undefined;
          handle.dispose();
        }
        if (result.stopReason === 'cancelled' || cancelled) return ExitCode.badInput;
        const score = scorePrediction(task.metric, result.text, sample.answers);
        outcomes.push({ length: cell.length, depth: cell.depth, seed: sampleSeed, promptTokens: sample.promptTokens, answers: sample.answers, prediction: result.text, score });
      }
      const done = outcomes.filter((outcome) => outcome.length === cell.length && outcome.depth === cell.depth);
      io.stderr(`kvscope eval: ${task.name} length ${cell.length}${cell.depth === null ? '' : `, depth ${cell.depth} %`}: ${formatScore(mean(done.map((o) => o.score)))} over ${done.length} sample${done.length === 1 ? '' : 's'}\n`);
    }
    const map = accuracyMap(cells, outcomes);
    if (json) io.stdout(stringifyJson({ ok: true, task: task.name, metric: task.metric, maxNewTokens, seed, cache: base.cacheMode, quantization: base.cacheMode === 'quantized' ? base.quantization : null, map, samples: outcomes }) + '\n');
    else io.stdout(formatAccuracyMap(task, map));
    return ExitCode.ok;
  } catch (error) {
    if (!(error instanceof RunError)) throw error;
    if (json) io.stdout(stringifyJson({ ok: false, error: error.toPayload() }) + '\n');
    const fix = error.fix !== undefined && !error.message.includes(error.fix) ? `\n  fix: ${error.fix}` : '';
    io.stderr(`kvscope eval: ${error.message}${fix}\n`);
    return error.code === 'refused' ? ExitCode.refused : ExitCode.badInput;
  } finally {
    stopListening();
  }
}

/** Rows are depths, columns lengths; each cell the mean score of its samples (RULER's mean, as a fraction). */
export function formatAccuracyMap(task: RetrievalTask, map: AccuracyMap): string {
  const header = [task.hasDepth ? 'depth \\ length' : 'length', ...map.lengths.map(String)];
  const rows = map.depths.map((depth, r) => [depth === null ? 'accuracy' : `${depth} %`, ...map.accuracy[r]!.map((value) => (value === null ? '–' : formatScore(value)))]);
  const widths = header.map((_, c) => Math.max(...[header, ...rows].map((row) => row[c]!.length)));
  const line = (row: string[]) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  return `${task.name} (${task.metric}), accuracy per cell\n${[header, ...rows].map(line).join('\n')}\n`;
}

function formatScore(value: number): string {
  return value.toFixed(2);
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
