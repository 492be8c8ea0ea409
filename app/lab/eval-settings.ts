import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { CacheMode, DequantizePath, ExecutionProviderName } from '../engine/types.js';
import type { FeedMode } from './chunk-plan.js';
import type { LabTargets } from './lab-targets.js';

/**
 * What `kvscope eval` is asked to do: a cache configuration (the same fields as a run's) scored on a
 * text, window by window, against the full-precision dynamic cache. Pure data: it crosses a thread
 * boundary with structured clone, and a sweep point's settings.json holds it.
 */
export interface EvalSettings {
  /** a model folder path, or `synthetic` / `synthetic-hybrid` */
  readonly model: string;
  readonly onnxFile?: string;
  readonly executionProvider: ExecutionProviderName;
  readonly cacheMode: CacheMode;
  /** used when cacheMode is `quantized` */
  readonly quantization: QuantizedCacheSettings;
  readonly text: EvalText;
  readonly windows: WindowSettings;
  /**
   * How the windows are fed: `auto` (absent) chunks float32-KV graphs and feeds float16-KV graphs a
   * token per run (run-eval.ts says why); `chunked` and `token-by-token` force one.
   */
  readonly feed?: 'auto' | FeedMode;
  /**
   * Quantized caches: where the cache is dequantized for attention (`--dequantize`, as `kvscope run`):
   * absent = the default path (graph where it can express the settings, else host). Both give the same
   * logits bit for bit; the reference is the full-precision source graph's either way.
   */
  readonly dequantize?: DequantizePath;
  /** kvscope extension (lab): which layers and which of K/V the quantized cache quantizes; absent = all, both */
  readonly targets?: LabTargets;
}

/** The text as the host read it (a file, stdin, or kvscope's own default text), or its token ids (`--text-ids`). */
export interface EvalText {
  /** where it came from, for people: a path, `-` for stdin, or `kvscope:default` */
  readonly name: string;
  /** the text; with `tokenIds`, the ids file as read (its identity: sha256 and characters) */
  readonly content: string;
  /**
   * `--text-ids FILE`: the text already as token ids, fed as they are (no tokenizer; model folders
   * without tokenizer.json). Windows get BOS first when the ids start with it, as with a tokenizer's.
   */
  readonly tokenIds?: readonly number[];
  /**
   * Set when `content` is only the start of a text file (`--text FILE` with `--windows N`: what the
   * windows need, text-prefix.ts): the file, its size and the sha256 of all of it (the text's
   * identity). The evaluation reads more of the file when the start holds too few tokens.
   */
  readonly file?: TextFilePrefix;
}

export interface TextFilePrefix {
  readonly path: string;
  /** the whole file's size */
  readonly bytes: number;
  /** the whole file's sha256 */
  readonly sha256: string;
  /** the bytes `content` decodes (a prefix ending at a whole UTF-8 character) */
  readonly prefixBytes: number;
}

/**
 * How the text's tokens become evaluation windows, as llama.cpp's perplexity tool cuts its chunks:
 * windows of `context` tokens starting every `stride` tokens, each window's first token replaced by
 * BOS when the tokenizer adds one; the first `prefill` tokens of a window are fed at once (a run's
 * prompt), and the tokens after them are scored one prediction each, rows prefill … context − 2
 * (llama.cpp scores rows n_ctx/2 … n_ctx − 2, its default prefill here).
 */
export interface WindowSettings {
  readonly context: number;
  readonly stride: number;
  readonly prefill: number;
  /** at most this many windows (llama.cpp's `--chunks`); null = every window the text holds */
  readonly maxWindows: number | null;
}

/** llama.cpp's perplexity defaults: n_ctx 512, scoring the second half of each chunk. */
export const DEFAULT_CONTEXT = 512;

export function defaultWindowSettings(context = DEFAULT_CONTEXT): WindowSettings {
  return { context, stride: context, prefill: Math.floor(context / 2), maxWindows: null };
}
