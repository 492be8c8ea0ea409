import type { StateCreator } from 'zustand/vanilla';
import type { RunCheck } from '../../app/preflight/check-run.js';
import type { PreflightResult } from '../../app/preflight/run-preflight.js';
import type { ErrorInfo } from './error-info.js';
import { promptIdsFieldProblem } from './settings-slice.js';
import type { WorkbenchState } from './workbench-state.js';

/**
 * The run check on the settings on screen (app/preflight/check-run.ts, computed by the host with the
 * real tokenized prompt), kept with the key of the model + settings it belongs to.
 */
export interface PreflightState {
  readonly status: 'idle' | 'checking' | 'ready' | 'error';
  readonly check: RunCheck | null;
  /** the quantized cache's preflight inside the check (null for a dynamic cache) */
  readonly result: PreflightResult | null;
  readonly error: ErrorInfo | null;
  /** which model + settings the check belongs to (a stale check is not shown as current) */
  readonly key: string | null;
  /** the key of `check` (differs from `key` while a newer check is under way) */
  readonly checkedKey: string | null;
}

export interface PreflightSlice {
  readonly preflight: PreflightState;
  preflightChecking(key: string): void;
  preflightDone(key: string, check: RunCheck | null): void;
  preflightFailed(key: string, error: ErrorInfo): void;
}

export const INITIAL_PREFLIGHT: PreflightState = { status: 'idle', check: null, result: null, error: null, key: null, checkedKey: null };

/** Whether the check on screen belongs to the settings on screen. */
export function isCurrentCheck(state: PreflightState): boolean {
  return state.status === 'ready' && state.check !== null && state.checkedKey === state.key;
}

export const createPreflightSlice: StateCreator<WorkbenchState, [], [], PreflightSlice> = (set, get) => ({
  preflight: INITIAL_PREFLIGHT,
  // The last check stays on screen while the next one is computed (no flicker while typing).
  preflightChecking: (key) => set((state) => ({ preflight: { ...state.preflight, status: 'checking', key } })),
  preflightDone: (key, check) => {
    if (get().preflight.key !== key) return; // a newer check started meanwhile
    set({ preflight: { status: check === null ? 'idle' : 'ready', check, result: check?.preflight ?? null, error: null, key, checkedKey: key } });
  },
  preflightFailed: (key, error) => {
    if (get().preflight.key !== key) return;
    set({ preflight: { status: 'error', check: null, result: null, error, key, checkedKey: key } });
  },
});

/**
 * Why Run is disabled right now, in a sentence shown next to the button; null when it may start.
 * While a newer check is under way the last one stands (a click is checked again before it starts).
 */
export function runBlockedReason(state: Pick<WorkbenchState, 'model' | 'preflight' | 'form'>): string | null {
  const summary = state.model.summary;
  if (state.model.status === 'loading') return 'The model is still opening.';
  if (summary === null || state.model.status !== 'ready') return 'Open a model first.';
  if (!summary.ok) return 'The model checks found errors (see the model panel).';
  if (promptIdsFieldProblem(state.form, summary) !== null) return 'The prompt ids cannot run: see why under the field.';
  const check = state.preflight.check;
  if (check === null) return state.preflight.status === 'error' ? 'The run check could not run; edit a setting to check again.' : null;
  if (check.refusal !== null) return 'The run check refuses these settings: see why, and a one-click fix, above.';
  return null;
}
