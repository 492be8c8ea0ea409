import type { QuantizedCacheSettings } from '../app/cache/cache-config.js';
import type { DequantizePath } from '../app/engine/types.js';

/**
 * One measurement of bench/generation.ts, run in a process of its own (bench/generation-child.ts):
 * open the model, one warm-up generation, then `timedRuns` timed generations of the same prompt.
 * Jobs and results cross the process boundary as JSON.
 */
export type GenerationEngine = 'kvscope-dynamic' | 'kvscope-quantized' | 'minimal-loop';

export interface GenerationJob {
  readonly engine: GenerationEngine;
  /** a model folder, or `synthetic` */
  readonly model: string;
  /** the prompt as text, or a length in tokens (BOS included) that `promptText` builds */
  readonly prompt: string | { readonly tokens: number };
  readonly newTokens: number;
  /** the warm-up run's new tokens; past 128 it includes a residual flush in quantized mode */
  readonly warmupNewTokens: number;
  /** the warm-up run's prompt length in tokens (synthetic prompts only); default: the timed runs' prompt */
  readonly warmupPromptTokens?: number;
  readonly timedRuns: number;
  /** kvscope-quantized only */
  readonly quantization?: QuantizedCacheSettings;
  /** kvscope-quantized only: where the cache is dequantized (default: kvscope's default) */
  readonly dequantize?: DequantizePath;
}

export interface GenerationSample {
  /** decode tokens per second of each timed run: (newTokens − 1) runs after the prefill, over their wall time */
  readonly decodeTokensPerSecond: number[];
  readonly promptTokens: number;
  /** the first timed run's generated ids, to check that engines agree */
  readonly tokenIds: number[];
  /** kvscope: the largest rss of the timed runs' step memory samples; the minimal loop: sampled every 250 ms the same way */
  readonly peakRssBytes: number;
  /** kvscope: stored KV bytes at the end of the last timed run (kvBytesTotal.totalBytes) */
  readonly kvBytes?: number;
  /** kvscope: the same tokens uncompressed in fp16 */
  readonly kvFp16BaselineBytes?: number;
  /** kvscope: mean milliseconds per decode step, split as StepTimings (timed runs together) */
  readonly stepSplitMs?: { readonly dequantize: number; readonly model: number; readonly quantize: number; readonly total: number };
}

const SENTENCE = ' Once upon a time.';
const FILLER = ' the';

/**
 * A text that the synthetic model's tokenizer encodes to exactly `tokens` ids, BOS included: the
 * sentence repeated (8 ids each), then single-id filler words. `encode` checks it.
 */
export function promptText(tokens: number, encode: (text: string) => number[]): string {
  const sentences = Math.floor((tokens - 1) / 8);
  const text = SENTENCE.repeat(sentences) + FILLER.repeat(tokens - 1 - 8 * sentences);
  const length = encode(text).length;
  if (length !== tokens) throw new Error(`the bench prompt encodes to ${length} tokens, expected ${tokens}; the synthetic tokenizer changed, adjust promptText.`);
  return text;
}
