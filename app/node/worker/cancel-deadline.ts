import type { StepMetrics } from '../../engine/types.js';

/** How many of the run's slowest steps a cancelled run may take to reach its next step boundary. */
const STEPS_ALLOWED = 4;

/**
 * How long a cancelled run may take to stop before its worker is called stuck and terminated, the
 * same for a run's own worker (worker-client.ts) and the warm one (warm-worker.ts): the configured
 * floor (10 s by default), or four of the run's slowest steps so far, whichever is longer. A cancel is
 * honoured at the next step boundary, so a big model whose steps take seconds finishes its step and
 * saves what it has rather than being cut off mid-run; only a worker silent for far longer than any
 * of its steps is terminated, and the run's error then says so.
 */
export class CancelDeadline {
  #slowestStepMs = 0;

  /** Every metrics batch the run reports. */
  observe(steps: readonly StepMetrics[]): void {
    for (const step of steps) {
      const ms = step.timings.totalMs + (step.timings.referenceMs ?? 0);
      if (Number.isFinite(ms) && ms > this.#slowestStepMs) this.#slowestStepMs = ms;
    }
  }

  timeoutMs(floorMs: number): number {
    return Math.max(floorMs, Math.ceil(STEPS_ALLOWED * this.#slowestStepMs));
  }

  /** The run's error when the deadline passed. */
  message(timeoutMs: number): string {
    return `The generation worker did not stop within ${timeoutMs / 1000} s of the cancel (${STEPS_ALLOWED} of its slowest steps, at least the cancel timeout), `
      + 'so it is taken to be stuck (in native code?) and was terminated. Metrics and text up to its last report were delivered.';
  }
}
