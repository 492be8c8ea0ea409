import type { StateCreator } from 'zustand/vanilla';
import type { PreflightResult } from '../../app/preflight/run-preflight.js';
import type { ErrorInfo } from './error-info.js';
import type { WorkbenchState } from './workbench-state.js';

export interface PreflightState {
  readonly status: 'idle' | 'checking' | 'ready' | 'error';
  readonly result: PreflightResult | null;
  readonly error: ErrorInfo | null;
  /** which model + settings the result belongs to (a stale result is not shown as current) */
  readonly key: string | null;
}

export interface PreflightSlice {
  readonly preflight: PreflightState;
  preflightChecking(key: string): void;
  preflightDone(key: string, result: PreflightResult | null): void;
  preflightFailed(key: string, error: ErrorInfo): void;
}

export const INITIAL_PREFLIGHT: PreflightState = { status: 'idle', result: null, error: null, key: null };

export const createPreflightSlice: StateCreator<WorkbenchState, [], [], PreflightSlice> = (set, get) => ({
  preflight: INITIAL_PREFLIGHT,
  // The last result stays on screen while the next one is computed (no flicker while typing).
  preflightChecking: (key) => set((state) => ({ preflight: { ...state.preflight, status: 'checking', key } })),
  preflightDone: (key, result) => {
    if (get().preflight.key !== key) return; // a newer check started meanwhile
    set({ preflight: { status: result === null ? 'idle' : 'ready', result, error: null, key } });
  },
  preflightFailed: (key, error) => {
    if (get().preflight.key !== key) return;
    set({ preflight: { status: 'error', result: null, error, key } });
  },
});
