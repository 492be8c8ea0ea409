import type { StateCreator } from 'zustand/vanilla';
import type { DamagedRunSummary, HistoryEntry, RunSummary } from '../../app/protocol/workbench-api.js';
import type { RunRecord } from '../../app/record/run-record.js';
import type { ErrorInfo } from './error-info.js';
import type { LoadStatus } from './model-slice.js';
import type { WorkbenchState } from './workbench-state.js';

export type MainView = 'live' | 'saved' | 'compare' | 'history' | 'lab';

export interface SavedRunState {
  readonly status: LoadStatus;
  readonly runId: string | null;
  readonly record: RunRecord | null;
  readonly error: ErrorInfo | null;
}

export interface CompareState {
  readonly status: LoadStatus;
  /** the runs ticked for comparison, in the order ticked (MAX_COMPARED at most) */
  readonly runIds: readonly string[];
  /** the compared records, in the order ticked (run A, B, C, …) */
  readonly records: readonly RunRecord[] | null;
  readonly error: ErrorInfo | null;
}

export interface HistorySlice {
  readonly view: MainView;
  readonly history: {
    readonly status: LoadStatus;
    readonly runs: readonly RunSummary[];
    /** files of the runs folder that are not readable records: listed with the reason, to delete or export */
    readonly damaged: readonly DamagedRunSummary[];
    readonly error: ErrorInfo | null;
  };
  readonly savedRun: SavedRunState;
  readonly compare: CompareState;
  setView(view: MainView): void;
  historyLoading(): void;
  historyLoaded(entries: readonly HistoryEntry[]): void;
  historyFailed(error: ErrorInfo): void;
  savedRunLoading(runId: string): void;
  savedRunLoaded(record: RunRecord): void;
  savedRunFailed(runId: string, error: ErrorInfo): void;
  /** ticks or unticks a run for comparison; past MAX_COMPARED a tick does nothing (the boxes are disabled) */
  toggleCompare(runId: string): void;
  compareLoading(): void;
  compareLoaded(records: readonly RunRecord[]): void;
  compareFailed(error: ErrorInfo): void;
  runDeleted(runId: string): void;
}

/** Compare takes 2 to 8 runs: more lines than eight no longer read apart on one chart. */
export const MIN_COMPARED = 2;
export const MAX_COMPARED = 8;

export const INITIAL_SAVED_RUN: SavedRunState = { status: 'idle', runId: null, record: null, error: null };
export const INITIAL_COMPARE: CompareState = { status: 'idle', runIds: [], records: null, error: null };

export const createHistorySlice: StateCreator<WorkbenchState, [], [], HistorySlice> = (set) => ({
  view: 'live',
  history: { status: 'idle', runs: [], damaged: [], error: null },
  savedRun: INITIAL_SAVED_RUN,
  compare: INITIAL_COMPARE,
  setView: (view) => set({ view }),
  historyLoading: () => set((state) => ({ history: { ...state.history, status: 'loading' } })),
  historyLoaded: (entries) => set((state) => {
    const runs = entries.filter((entry): entry is RunSummary => !('damaged' in entry));
    const damaged = entries.filter((entry): entry is DamagedRunSummary => 'damaged' in entry);
    return {
      history: { status: 'ready', runs, damaged, error: null },
      // ticks of runs that no longer exist go away
      compare: { ...state.compare, runIds: state.compare.runIds.filter((id) => runs.some((run) => run.id === id)) },
    };
  }),
  historyFailed: (error) => set((state) => ({ history: { ...state.history, status: 'error', error } })),
  savedRunLoading: (runId) => set({ savedRun: { status: 'loading', runId, record: null, error: null }, view: 'saved' }),
  savedRunLoaded: (record) => set((state) => (state.savedRun.runId === record.id ? { savedRun: { status: 'ready', runId: record.id, record, error: null } } : {})),
  savedRunFailed: (runId, error) => set((state) => (state.savedRun.runId === runId ? { savedRun: { status: 'error', runId, record: null, error } } : {})),
  toggleCompare: (runId) => set((state) => {
    const ids = state.compare.runIds;
    if (ids.includes(runId)) return { compare: { ...state.compare, runIds: ids.filter((id) => id !== runId) } };
    // never untick a run the user ticked: a tick past the limit is refused, not traded for the oldest
    if (ids.length >= MAX_COMPARED) return {};
    return { compare: { ...state.compare, runIds: [...ids, runId] } };
  }),
  compareLoading: () => set((state) => ({ compare: { ...state.compare, status: 'loading', error: null }, view: 'compare' })),
  compareLoaded: (records) => set((state) => ({ compare: { ...state.compare, status: 'ready', records, error: null } })),
  compareFailed: (error) => set((state) => ({ compare: { ...state.compare, status: 'error', records: null, error } })),
  runDeleted: (runId) => set((state) => {
    const compared = state.compare.records?.some((record) => record.id === runId) === true;
    const opened = state.savedRun.runId === runId;
    // a view showing the deleted run falls back to the history
    const view = (opened && state.view === 'saved') || (compared && state.view === 'compare') ? 'history' : state.view;
    return {
      view,
      history: { ...state.history, runs: state.history.runs.filter((run) => run.id !== runId), damaged: state.history.damaged.filter((file) => file.id !== runId) },
      compare: { ...state.compare, runIds: state.compare.runIds.filter((id) => id !== runId), ...(compared ? { records: null, status: 'idle' as const } : {}) },
      ...(opened ? { savedRun: INITIAL_SAVED_RUN } : {}),
    };
  }),
});
