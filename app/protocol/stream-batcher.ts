import type { StepMetrics } from '../engine/types.js';
import type { MetricsMessage, RequestId, TextMessage } from './messages.js';

/** Time as the batcher needs it; the worker passes performance.now and setTimeout, tests a fake clock. */
export interface BatchClock {
  /** milliseconds, monotonic */
  now(): number;
  /** runs `callback` once after `delayMs`; the returned function cancels it */
  schedule(callback: () => void, delayMs: number): () => void;
}

export interface StreamBatcherOptions {
  /** at most one text and one metrics message per interval while steps keep coming */
  readonly intervalMs: number;
  /** post early when this many steps are waiting, so a batch stays small on fast models */
  readonly maxSteps: number;
}

/**
 * 80 ms is ~12 updates a second, smooth for a progress bar or a chart, while a fast model (stories260k
 * runs thousands of tokens a second) sends one message per dozens of steps instead of one per step.
 */
export const DEFAULT_BATCH_OPTIONS: StreamBatcherOptions = { intervalMs: 80, maxSteps: 256 };

/**
 * Turns one run's per-token callbacks into `text` and `metrics` messages, batched by time. The first
 * step after a quiet interval goes out at once (the prefill, or any step of a slow model), and a timer
 * flushes what waits behind it, so nothing sits in the batch longer than `intervalMs`. The caller
 * flushes before the run's last message so every batch precedes `done` or `error`.
 */
export class StreamBatcher {
  private text = '';
  private tokenIds: number[] = [];
  private steps: StepMetrics[] = [];
  private lastPostMs = -Infinity;
  private cancelTimer: (() => void) | undefined;
  private disposed = false;

  constructor(
    private readonly id: RequestId,
    private readonly post: (message: TextMessage | MetricsMessage) => void,
    private readonly clock: BatchClock,
    private readonly options: StreamBatcherOptions = DEFAULT_BATCH_OPTIONS,
  ) {}

  addText(delta: string, tokenId: number): void {
    this.text += delta;
    this.tokenIds.push(tokenId);
    this.afterAdd();
  }

  addStep(metrics: StepMetrics): void {
    this.steps.push(metrics);
    this.afterAdd();
  }

  /** Posts whatever waits: text first, then metrics. */
  flush(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (this.disposed) return;
    this.lastPostMs = this.clock.now();
    if (this.tokenIds.length > 0) {
      this.post({ type: 'text', id: this.id, delta: this.text, tokenIds: this.tokenIds });
      this.text = '';
      this.tokenIds = [];
    }
    if (this.steps.length > 0) {
      this.post({ type: 'metrics', id: this.id, steps: this.steps });
      this.steps = [];
    }
  }

  /** Drops anything unsent and the timer. */
  dispose(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.disposed = true;
    this.steps = [];
    this.tokenIds = [];
    this.text = '';
  }

  private afterAdd(): void {
    if (this.disposed) return;
    const sinceLastMs = this.clock.now() - this.lastPostMs;
    if (sinceLastMs >= this.options.intervalMs || this.steps.length >= this.options.maxSteps) {
      this.flush();
      return;
    }
    this.cancelTimer ??= this.clock.schedule(() => this.flush(), this.options.intervalMs - sinceLastMs);
  }
}
