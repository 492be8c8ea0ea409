import type { StepMetrics } from '../../engine/types.js';

/** How many of the work's slowest steps a cancelled request may take to reach its next step boundary. */
const STEPS_ALLOWED = 4;

/**
 * A step of a big model on the CPU can take seconds; a cancel is honoured at the next step, so the
 * timeout allows for a few slow steps before assuming the worker is stuck in native code. It is the
 * floor: a run whose steps are slower gets four of its slowest steps.
 */
export const DEFAULT_CANCEL_TIMEOUT_MS = 10_000;

/**
 * How long a cancelled request may take to stop before its worker is called stuck and terminated, the
 * same for every worker (worker-supervisor.ts): the configured floor (10 s by default), or four of the
 * slowest steps so far, whichever is longer. A generation run's step is a token (its own timings); a
 * lab job's is the time between two of its reports (a window). A cancel is honoured at the next step
 * boundary, so a big model whose steps take seconds finishes its step and saves what it has rather
 * than being cut off mid-run; only a worker silent for far longer than any of its steps is
 * terminated, and the error then says so.
 */
export class CancelDeadline {
  #slowestStepMs = 0;

  /** Every metrics batch the run reports. */
  observe(steps: readonly StepMetrics[]): void {
    for (const step of steps) this.observeStepMs(step.timings.totalMs + (step.timings.referenceMs ?? 0));
  }

  /** One step's duration, where the work does not time its own steps. */
  observeStepMs(ms: number): void {
    if (Number.isFinite(ms) && ms > this.#slowestStepMs) this.#slowestStepMs = ms;
  }

  timeoutMs(floorMs: number): number {
    return Math.max(floorMs, Math.ceil(STEPS_ALLOWED * this.#slowestStepMs));
  }

  /**
   * The error when the deadline passed: `worker` names it ("generation worker"), `delivered` says what
   * of its work reached the caller.
   */
  message(timeoutMs: number, worker = 'generation worker', delivered = 'Metrics and text up to its last report were delivered.'): string {
    return `The ${worker} did not stop within ${timeoutMs / 1000} s of the cancel (${STEPS_ALLOWED} of its slowest steps, at least the cancel timeout), `
      + `so it is taken to be stuck (in native code?) and was terminated. ${delivered}`;
  }
}
