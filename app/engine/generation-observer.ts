import type { StepMetrics } from './types.js';

/**
 * How a caller follows a run. All callbacks are optional and called synchronously between steps, so
 * they must be cheap: a worker forwards them (throttled) to the UI.
 */
export interface GenerationObserver {
  /** new text as soon as it decodes to whole characters; `tokenId` is the token that completed it */
  onText?(delta: string, tokenId: number): void;
  /** the metrics of each step, step 0 = prefill */
  onStep?(metrics: StepMetrics): void;
  /** polled before every step; true stops the run with stopReason `cancelled` (takes effect within one step) */
  isCancelled?(): boolean;
}
