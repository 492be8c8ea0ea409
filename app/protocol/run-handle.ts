import type { GenerationResult } from '../engine/generation-result.js';
import type { RunSettings, StepMetrics } from '../engine/types.js';
import type { RequestId } from './messages.js';

/**
 * A run as its caller sees it, whatever carries it: a worker thread (app/node/worker/worker-client.ts),
 * later the Electron bridge or the serve host's WebSocket. Pure types, so the CLI command logic and
 * the renderer can depend on them.
 */

/** What a caller hears while a run goes on, in order, on the caller's event loop. */
export interface RunHandlers {
  /** newly decoded text and the token ids that completed it */
  onText?(delta: string, tokenIds: readonly number[]): void;
  /** a batch of per-step metrics (several steps per call on a fast model) */
  onMetrics?(steps: readonly StepMetrics[]): void;
  /** the run waits for another WebGPU run's worker to exit before its own starts */
  onQueued?(): void;
}

/** A run in progress. Dispose it when done with it; disposing a live run stops it. */
export interface RunHandle {
  readonly id: RequestId;
  /**
   * Resolves with the result when the run finishes or is cancelled in time (stopReason `cancelled`);
   * rejects with a `RunError` otherwise. It always settles: a crashed, stuck or disposed run ends
   * with an error, never a hang.
   */
  readonly done: Promise<GenerationResult>;
  /** Asks the run to stop at its next step; a run that does not stop in time is ended by force. */
  cancel(): void;
  dispose(): void;
}

export type StartRun = (settings: RunSettings, handlers: RunHandlers) => RunHandle;
