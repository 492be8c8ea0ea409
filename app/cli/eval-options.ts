import { defaultEvalText, DEFAULT_TEXT_NAME } from '../lab/default-text.js';
import { parsePromptIds } from '../engine/prompt-token-ids.js';
import { DEFAULT_CONTEXT, type EvalSettings, type EvalText, type WindowSettings } from '../lab/eval-settings.js';
import { decodeEvalText, wholeCharacters } from '../lab/eval-text-bytes.js';
import { tokensWindowsNeed } from '../lab/text-prefix.js';
import { checkWindowSettings } from '../lab/windows.js';
import { KV_PARTS, type KvParts, type LabTargets } from '../lab/lab-targets.js';
import type { CliIo } from './io.js';
import { UsageError } from './io.js';
import { choiceOption, integerOption, optionalString, type RawOptions } from './options.js';
import { runSettingsFromOptions } from './run-command.js';

/** How eval reads `--text -`: the host's stdin as bytes (absent where there is none). */
export type ReadStdin = () => Uint8Array;

/**
 * `kvscope eval`'s flags as EvalSettings. The model, execution provider and cache come from `run`'s
 * own parser (runSettingsFromOptions), so every cache option `run` understands, today's and those
 * added later, means the same here and in a sweep (whose keys are these flags' names).
 */
export function evalSettingsFromOptions(options: RawOptions, io: CliIo, readStdin?: ReadStdin): EvalSettings {
  const run = runSettingsFromOptions(options, io);
  const context = integerOption(options, 'context', DEFAULT_CONTEXT);
  const windowsFlag = options['windows'];
  const windows: WindowSettings = {
    context,
    stride: integerOption(options, 'stride', context),
    prefill: integerOption(options, 'prefill', Math.floor(context / 2)),
    maxWindows: windowsFlag === undefined ? null : integerOption(options, 'windows'),
  };
  // Here, with the flags' names and ranges, before the settings cross to the lab host (whose own check
  // of a negative count is a protocol refusal, not a user's word).
  checkWindowSettings(windows);
  const targets = targetsFromOptions(options);
  if (targets !== undefined && run.cacheMode === 'dynamic') {
    throw new UsageError('--quantize-layers and --quantize-parts choose what the quantized cache quantizes; they have no effect with --cache dynamic.');
  }
  return {
    model: run.model,
    ...(run.onnxFile !== undefined ? { onnxFile: run.onnxFile } : {}),
    executionProvider: run.executionProvider,
    cacheMode: run.cacheMode,
    quantization: run.quantization,
    text: readEvalText(options, io, readStdin, tokensWindowsNeed(windows)),
    windows,
    ...(options['feed'] === undefined ? {} : { feed: choiceOption(options, 'feed', ['auto', 'chunked', 'token-by-token'] as const) }),
    ...(targets === undefined ? {} : { targets }),
    ...(run.dequantize === undefined ? {} : { dequantize: run.dequantize }),
  };
}

/** `--text FILE`, `--text -` (stdin), `--text-ids FILE`, or kvscope's own default text. */
function readEvalText(options: RawOptions, io: CliIo, readStdin: ReadStdin | undefined, neededTokens: number | null): EvalText {
  const path = optionalString(options, 'text');
  const idsPath = optionalString(options, 'text-ids');
  if (path !== undefined && idsPath !== undefined) {
    throw new UsageError('--text and --text-ids both give the text; pass one (--text-ids for a model folder without tokenizer.json).');
  }
  if (idsPath !== undefined) return readEvalTextIds(io, idsPath);
  if (path === undefined) return { name: DEFAULT_TEXT_NAME, content: defaultEvalText() };
  if (path === '-') {
    if (readStdin === undefined) throw new UsageError('--text - reads the text from stdin, which this host does not have. Pass a file.');
    return { name: '-', content: decodeEvalText(readStdin(), '--text - (stdin)') };
  }
  return readEvalTextFile(io, path, path, neededTokens);
}

/**
 * Bytes per token a text's first read allows: eight times English's ~4 and above what code, CJK or
 * digits take; a text whose start holds fewer tokens is read further by the evaluation (run-eval.ts).
 */
const PREFIX_BYTES_PER_TOKEN = 32;
const MIN_PREFIX_BYTES = 64 * 1024;

/**
 * A text file given to eval or a sweep, checked as text (UTF-8, not binary, not empty) before any
 * work. With `neededTokens` (the windows are capped) only the start that should hold them is read
 * (the whole file's size and sha256 come with it); otherwise the whole file.
 */
export function readEvalTextFile(io: CliIo, path: string, name: string, neededTokens: number | null = null): EvalText {
  if (io.isDirectory(path)) throw new UsageError(`--text ${path} is a folder; pass a text file (UTF-8).`);
  const source = `--text ${path}`;
  if (neededTokens === null || io.readFilePrefix === undefined) return { name, content: decodeEvalText(io.readFile(path), source) };
  const prefix = io.readFilePrefix(path, Math.max(MIN_PREFIX_BYTES, neededTokens * PREFIX_BYTES_PER_TOKEN));
  if (prefix.bytes.length >= prefix.size) return { name, content: decodeEvalText(prefix.bytes, source) };
  const whole = wholeCharacters(prefix.bytes);
  return {
    name, content: decodeEvalText(whole, source),
    file: { path, bytes: prefix.size, sha256: prefix.sha256, prefixBytes: whole.length },
  };
}

/**
 * `--text-ids FILE`: token ids separated by commas or whitespace (or a `[…]` list), read as a run's
 * `--prompt-ids` are (prompt-token-ids.ts); run-eval checks them against the graph's vocabulary.
 */
export function readEvalTextIds(io: CliIo, path: string, name = path): EvalText {
  if (io.isDirectory(path)) throw new UsageError(`--text-ids ${path} is a folder; pass a file of token ids.`);
  const content = decodeEvalText(io.readFile(path), `--text-ids ${path}`);
  const ids = parsePromptIds(content);
  if (ids === null) {
    throw new UsageError(`--text-ids ${path} is not a list of token ids: it must hold non-negative integers separated by commas or whitespace (1, 15043, 727 …).`);
  }
  return { name, content, tokenIds: ids };
}

/** `--quantize-layers 0,3` (or `all`) and `--quantize-parts key|value|both`: the lab's targets (a kvscope extension). */
export function targetsFromOptions(options: RawOptions): LabTargets | undefined {
  const layersFlag = optionalString(options, 'quantize-layers');
  const partsFlag = options['quantize-parts'];
  if (layersFlag === undefined && partsFlag === undefined) return undefined;
  const parts = choiceOption<KvParts>(options, 'quantize-parts', KV_PARTS, 'both');
  if (layersFlag === undefined || layersFlag.trim() === 'all') return { layers: null, parts };
  const layers = layersFlag.split(',').map((item) => item.trim());
  if (layers.length === 0 || layers.some((item) => !/^\d+$/.test(item))) {
    throw new UsageError(`--quantize-layers must be a comma-separated list of layer indices (0,3,5) or all, got ${JSON.stringify(layersFlag)}.`);
  }
  return { layers: [...new Set(layers.map(Number))].sort((a, b) => a - b), parts };
}
