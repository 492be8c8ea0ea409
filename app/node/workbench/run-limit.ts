import { availableParallelism, totalmem } from 'node:os';
import type { GenerationResult } from '../../engine/generation-result.js';
import { ApiError } from '../../protocol/api-error.js';
import { RunError } from '../../protocol/run-error.js';
import type { RunHandle, RunHandlers, StartRun } from '../../protocol/run-handle.js';

/** How many runs a host lets go at once, and how many may wait for a turn. */
export interface RunLimits {
  readonly maxConcurrent: number;
  readonly maxQueued: number;
}

/** `KVSCOPE_MAX_RUNS=N` sets the concurrent runs of a host (serve: also `--max-runs N`). */
export const MAX_RUNS_VARIABLE = 'KVSCOPE_MAX_RUNS';

/**
 * The default: one run per two cores (onnxruntime's intra-op threads take the rest; two runs on
 * one core each are no faster than one after the other) and one per 4 GiB of memory (a model, its
 * cache and the reference lane), at least one. Ten unlimited runs on two cores took 687 MB and made
 * each ten times slower; past the limit runs wait their turn, and past the queue they are refused.
 */
export function defaultRunLimits(options: { cores?: number; memoryBytes?: number; env?: NodeJS.ProcessEnv } = {}): RunLimits {
  const env = options.env ?? process.env;
  const configured = env[MAX_RUNS_VARIABLE];
  if (configured !== undefined && configured !== '') {
    try {
      return { maxConcurrent: parseMaxRuns(configured, MAX_RUNS_VARIABLE), maxQueued: 16 };
    } catch (error) {
      // A host still starts: the default below applies, and the reason is on stderr.
      console.error(`kvscope: ignored ${MAX_RUNS_VARIABLE}: ${(error as Error).message}`);
    }
  }
  const cores = options.cores ?? availableParallelism();
  const memoryBytes = options.memoryBytes ?? totalmem();
  const maxConcurrent = Math.max(1, Math.min(Math.floor(cores / 2), Math.floor(memoryBytes / (4 * 2 ** 30))));
  return { maxConcurrent, maxQueued: 16 };
}

/** A positive integer of runs, from a flag or the environment variable; anything else is refused with how to write it. */
export function parseMaxRuns(text: string, source: string): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1) {
    throw new ApiError({ code: 'invalid-input', message: `${source} must be a whole number of runs, 1 or more, got ${JSON.stringify(text)}.`, fix: `Set ${source} to e.g. 2, or leave it unset for the default from this machine's cores and memory.` });
  }
  return Number(text);
}

/**
 * Wraps a StartRun so that at most `maxConcurrent` runs go at once; the next ones wait in order
 * (their handle exists at once, so a cancel while waiting ends them without starting), and past
 * `maxQueued` waiting a start is refused with an ApiError that says the limit and how to raise it.
 */
export function limitConcurrentRuns(start: StartRun, limits: RunLimits): StartRun & { readonly running: () => number; readonly waiting: () => number } {
  let running = 0;
  const queue: QueuedRun[] = [];
  const next = (): void => {
    while (running < limits.maxConcurrent && queue.length > 0) {
      const run = queue.shift()!;
      if (run.settledEarly) continue;
      running++;
      run.begin(() => {
        running--;
        next();
      });
    }
  };
  const limited = (settings: Parameters<StartRun>[0], handlers: RunHandlers): RunHandle => {
    if (running >= limits.maxConcurrent && queue.length >= limits.maxQueued) {
      throw new ApiError({
        code: 'invalid-input',
        message: `${running} runs are going and ${queue.length} are waiting, the most this workbench takes (${limits.maxConcurrent} at once, ${limits.maxQueued} waiting). The run was not started.`,
        fix: `Wait for a run to finish or cancel one. ${MAX_RUNS_VARIABLE} (or kvscope serve --max-runs) sets how many go at once.`,
      });
    }
    const run = new QueuedRun(() => start(settings, handlers));
    queue.push(run);
    next();
    return run;
  };
  return Object.assign(limited, { running: () => running, waiting: () => queue.filter((run) => !run.settledEarly).length });
}

let nextQueuedId = 1;

/** A run that may still be waiting for a slot; once started, it is the real handle's proxy. */
class QueuedRun implements RunHandle {
  readonly id = nextQueuedId++;
  readonly done: Promise<GenerationResult>;
  settledEarly = false;
  private inner: RunHandle | undefined;
  private cancelRequested = false;
  private resolve!: (result: GenerationResult) => void;
  private reject!: (error: unknown) => void;

  constructor(private readonly start: () => RunHandle) {
    this.done = new Promise<GenerationResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.done.catch(() => undefined);
  }

  begin(release: () => void): void {
    let inner: RunHandle;
    try {
      inner = this.start();
    } catch (error) {
      release();
      this.reject(error);
      return;
    }
    this.inner = inner;
    inner.done.then(this.resolve, this.reject).finally(release);
    if (this.cancelRequested) inner.cancel();
  }

  cancel(): void {
    if (this.inner !== undefined) return this.inner.cancel();
    this.cancelRequested = true;
    this.endWaiting();
  }

  dispose(): void {
    if (this.inner !== undefined) return this.inner.dispose();
    this.endWaiting();
  }

  /** Cancelled or disposed while waiting: it never started, so there is no result to save. */
  private endWaiting(): void {
    if (this.settledEarly) return;
    this.settledEarly = true;
    this.reject(new RunError({ code: 'cancelled', message: 'The run was cancelled while it waited for a free slot (other runs were going); it never started.' }));
  }
}
