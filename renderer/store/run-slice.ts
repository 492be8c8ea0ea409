import type { StateCreator } from 'zustand/vanilla';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import type { ModelDiagnostic } from '../../app/engine/model-diagnostic.js';
import type { RunSettings } from '../../app/engine/types.js';
import type { ErrorInfo } from './error-info.js';
import type { WorkbenchState } from './workbench-state.js';

export type RunStatus = 'idle' | 'starting' | 'running' | 'cancelling' | 'done' | 'error';

/**
 * The live run's lifecycle, nothing per step: metrics and text stream into buffers outside React
 * (renderer/metrics), so a metrics batch never changes this state.
 */
export interface LiveRunState {
  readonly status: RunStatus;
  /** increases with every run started; names the live buffers that belong to it */
  readonly serial: number;
  readonly runId: string | null;
  readonly settings: RunSettings | null;
  readonly result: GenerationResult | null;
  readonly savedRunId: string | null;
  readonly error: ErrorInfo | null;
}

export interface RunSlice {
  readonly run: LiveRunState;
  runStarting(settings: RunSettings): number;
  runStarted(serial: number, runId: string): void;
  /** the first event arrived: the engine is generating */
  runStreaming(serial: number): void;
  runCancelling(serial: number): void;
  runFinished(serial: number, result: GenerationResult, savedRunId: string | null): void;
  runFailed(serial: number, error: ErrorInfo): void;
}

export const INITIAL_RUN: LiveRunState = { status: 'idle', serial: 0, runId: null, settings: null, result: null, savedRunId: null, error: null };

/**
 * The notice of a run that finished but could not be saved to the history (an unwritable data folder):
 * the host keeps its record for the session under the live run id (workbench-backend.ts).
 */
export function notSavedNotice(result: GenerationResult | null): ModelDiagnostic | null {
  return result?.diagnostics.find((d) => d.code === 'run-not-saved') ?? null;
}

/**
 * The id a finished live run is loaded and exported by: its saved record's, else, for a run the host
 * could not save, the live run id it keeps the record under; null when neither holds.
 */
export function exportableRunId(run: Pick<LiveRunState, 'status' | 'runId' | 'result' | 'savedRunId'>): string | null {
  if (run.status !== 'done') return null;
  if (run.savedRunId !== null) return run.savedRunId;
  return notSavedNotice(run.result) !== null ? run.runId : null;
}

export function isRunActive(status: RunStatus): boolean {
  return status === 'starting' || status === 'running' || status === 'cancelling';
}

export const createRunSlice: StateCreator<WorkbenchState, [], [], RunSlice> = (set, get) => {
  /** Applies `update` only while `serial` is still the live run (late events of an old run are dropped). */
  const forRun = (serial: number, update: (run: LiveRunState) => Partial<LiveRunState> | null): void => {
    const run = get().run;
    if (run.serial !== serial) return;
    const patch = update(run);
    if (patch !== null) set({ run: { ...run, ...patch } });
  };
  return {
    run: INITIAL_RUN,
    runStarting: (settings) => {
      const serial = get().run.serial + 1;
      set({ run: { status: 'starting', serial, runId: null, settings, result: null, savedRunId: null, error: null } });
      return serial;
    },
    runStarted: (serial, runId) => forRun(serial, () => ({ runId })),
    runStreaming: (serial) => forRun(serial, (run) => (run.status === 'starting' ? { status: 'running' } : null)),
    runCancelling: (serial) => forRun(serial, (run) => (isRunActive(run.status) ? { status: 'cancelling' } : null)),
    runFinished: (serial, result, savedRunId) => forRun(serial, () => ({ status: 'done', result, savedRunId, error: null })),
    runFailed: (serial, error) => forRun(serial, () => ({ status: 'error', error })),
  };
};
