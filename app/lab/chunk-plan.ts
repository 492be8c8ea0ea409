import type { CacheMode } from '../engine/types.js';

/**
 * One run of a window's evaluation: tokens [start, end) fed at once, the last `rows` logits rows read,
 * and the cache updated in `updates` (StepRunner's collapsed token-by-token updates).
 */
export interface EvalChunk {
  readonly start: number;
  readonly end: number;
  readonly rows: number;
  readonly updates: readonly number[];
}

/** `chunked`: as few runs as the cache's semantics allow (eval); `token-by-token`: a run per token, as generation feeds them. */
export type FeedMode = 'chunked' | 'token-by-token';

/**
 * The runs that feed a window of `length` tokens with a prefill of `prefill` exactly as token-by-token
 * generation would (spec §1.3): the prefill in one run, then one token per decode step. Chunked, the
 * decode steps are grouped into runs that end at the flush steps, max(R, 2)·k after the prefill
 * (flush-schedule.ts): inside such a run every token attends to [deq(Q) | exact earlier tokens |
 * itself], which is what its own step would have seen, and the run's updates `[n − 1, 1]` make the
 * flush at its last token, as the step would. The dynamic cache never flushes and its prefill returns
 * its inputs, so its window is one run (one full-sequence teacher-forced pass); a quantized layer's
 * prefill quantizes at once, so the prefill stays its own run there. The rows of every token after
 * the prefill are read (the prefill run reads only its last row, which no window scores).
 */
export function planWindowChunks(length: number, prefill: number, cacheMode: CacheMode, residualLength: number, mode: FeedMode = 'chunked'): EvalChunk[] {
  if (mode === 'chunked' && cacheMode === 'dynamic') return [{ start: 0, end: length, rows: length - prefill, updates: [length] }];
  const chunks: EvalChunk[] = [{ start: 0, end: prefill, rows: 1, updates: [prefill] }];
  const cycle = mode === 'token-by-token' ? 1 : Math.max(residualLength, 2);
  for (let start = prefill; start < length; start += cycle) {
    const end = Math.min(start + cycle, length);
    const n = end - start;
    chunks.push({ start, end, rows: n, updates: n === cycle && n > 1 ? [n - 1, 1] : [n] });
  }
  return chunks;
}
