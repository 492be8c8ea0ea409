import type { DequantizePath } from '../app/engine/types.js';

/**
 * One measurement of bench/in-graph-memory.ts, in a process of its own (bench/in-graph-memory-child.ts),
 * so that the process's own peak RSS (getrusage's ru_maxrss, `process.resourceUsage().maxRSS`) is this
 * run's alone. Jobs and results cross the process boundary as JSON.
 */
export type CachePath = 'dynamic' | DequantizePath;

export type MemoryJob =
  /**
   * A short prompt, then greedy decoding with `ignoreEos` to `promptTokens + newTokens` tokens, with
   * ru_maxrss and the cache's accounting recorded when the context reaches each checkpoint (the peak
   * of a run that stopped there: the same steps, in the same process); `capBytes` stops the run once
   * the process's RSS passes it (the longest context under a memory cap).
   */
  | {
    readonly kind: 'decode'; readonly path: CachePath; readonly model: string; readonly promptTokens: number; readonly newTokens: number;
    readonly checkpoints: readonly number[]; readonly capBytes?: number;
  }
  /** one prefill of a long prompt and one decode step: the peak of a prompt whose K/V come back all at once */
  | { readonly kind: 'prefill'; readonly path: CachePath; readonly model: string; readonly promptTokens: number }
  /**
   * One decode step at `tokens` of context on a store of random K/V: ORT's own peak during that run
   * (ru_maxrss after it minus before it; every input is allocated before). `graph` gated as runs are,
   * `ungated` the same rewrite without gates, `host` the source graph fed every dequantized history.
   */
  | { readonly kind: 'step'; readonly variant: 'graph' | 'ungated' | 'host'; readonly model: string; readonly tokens: number };

/** What a `step` job measured. */
export interface StepSample {
  readonly peakDeltaBytes: number;
  /** whether the peak was reset before the run (peak-rss.ts): else peakDeltaBytes is only what rose above loading's peak */
  readonly peakReset?: boolean;
  /** one layer's K and V history in float32, and every layer's */
  readonly layerHistoryBytes: number;
  readonly allLayersHistoryBytes: number;
}

/** The state of a decode run when its context reached a checkpoint. */
export interface Checkpoint {
  readonly contextTokens: number;
  /** ru_maxrss so far */
  readonly peakRssBytes: number;
  /** the cache's accounting at that step (codes + scale/zero + residual, or the dynamic history) */
  readonly storedKvBytes: number;
  readonly workingKvBytes: number;
  /** decode tokens per second over the 256 steps up to the checkpoint */
  readonly tailTokensPerSecond: number;
}

export interface MemorySample {
  /** ru_maxrss of the whole process, bytes */
  readonly peakRssBytes: number;
  /** rss when the run ended */
  readonly endRssBytes: number;
  /** tokens in the cache at the end */
  readonly contextTokens: number;
  readonly newTokens: number;
  /** decode tokens per second over the whole run, and over its last 256 decode steps */
  readonly decodeTokensPerSecond: number;
  readonly tailTokensPerSecond: number;
  /** the cache's accounting at the end: stored bytes (codes + scale/zero + residual, or the dynamic history) */
  readonly storedKvBytes: number;
  /** JavaScript working buffers the lane reported (dequantized history, flush scratch) */
  readonly workingKvBytes: number;
  /** what ran (the record's `dequantize`) */
  readonly dequantize: DequantizePath | null;
  readonly stopReason: string;
  /** with a cap: whether it stopped the run (else maxNewTokens did), and the context when it did */
  readonly capped?: boolean;
  readonly checkpoints: readonly Checkpoint[];
  /** [contextTokens, ru_maxrss bytes] every 32 decode steps: the context at which a memory cap would be passed */
  readonly trajectory: readonly (readonly [number, number])[];
  readonly generatedTokenIds: readonly number[];
}
