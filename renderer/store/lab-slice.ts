import type { StateCreator } from 'zustand/vanilla';
import type { EvalRecord } from '../../app/lab/eval-record.js';
import type { LabSweepProgress, LabSweepSummary } from '../../app/lab/lab-api.js';
import type { RetrievalTaskName } from '../../app/lab/retrieval/retrieval-task.js';
import type { SensitivityPreset } from '../../app/lab/sensitivity.js';
import type { SweepPoint } from '../../app/lab/sweep-points.js';
import type { SweepRow } from '../../app/lab/sweep-results.js';
import type { SweepSpec } from '../../app/lab/sweep-spec.js';
import type { ErrorInfo } from './error-info.js';
import type { LoadStatus } from './model-slice.js';
import type { WorkbenchState } from './workbench-state.js';

/** The run-panel fields a Lab sweep can vary; each takes a comma-separated list of values (empty: the run panel's value). */
export const LAB_VARIED_FIELDS = ['backend', 'nbits', 'group-size', 'residual-length', 'axis-key', 'axis-value'] as const;
export type LabVariedField = (typeof LAB_VARIED_FIELDS)[number];

/** The Lab's setup form: what varies and over what, the text's windows, the preset, the parallelism. */
export interface LabSetup {
  readonly name: string;
  readonly vary: Readonly<Record<LabVariedField, string>>;
  /** tokens per window and windows evaluated */
  readonly context: number;
  readonly windows: number;
  /** a text file on the host (empty: kvscope's own default text) */
  readonly textPath: string;
  readonly preset: SensitivityPreset | 'none';
  readonly jobs: number;
  /** also evaluate the full-precision dynamic cache (the reference itself, KLD 0) */
  readonly includeDynamic: boolean;
  /**
   * a retrieval task (`kvscope eval --task`): each point scores generated prompts on the depth × length
   * grid in place of the text's windows; none: the text evaluation
   */
  readonly task: RetrievalTaskName | 'none';
  /** the task's prompt lengths in tokens and needle depths in percent, comma-separated as --lengths and --depths take them */
  readonly lengths: string;
  readonly depths: string;
  readonly samples: number;
  readonly seed: number;
}

export type ParetoX = 'bits' | 'bytes';
export type ParetoY = 'kld' | 'delta-ppl' | 'top1-disagreement';

export interface LabChartChoice {
  readonly x: ParetoX;
  readonly y: ParetoY;
  readonly logX: boolean;
  readonly logY: boolean;
  /** every point named beside its dot (off: named on hover only) */
  readonly labels: boolean;
}

export type LabRunStatus = 'idle' | 'starting' | 'running' | 'stopping' | 'done' | 'error';

/** The sweep the Lab shows: running now, or opened from the history. */
export interface LabSweepState {
  readonly sweepId: string | null;
  readonly name: string;
  readonly status: LabRunStatus;
  /** stopped before every point ran (it can be resumed) */
  readonly interrupted: boolean;
  readonly spec: SweepSpec | null;
  readonly points: readonly SweepPoint[];
  readonly total: number;
  readonly rows: readonly SweepRow[];
  readonly progress: LabSweepProgress | null;
  readonly error: ErrorInfo | null;
}

export interface LabSlice {
  readonly lab: {
    readonly setup: LabSetup;
    readonly chart: LabChartChoice;
    readonly sweep: LabSweepState;
    readonly history: { readonly status: LoadStatus; readonly sweeps: readonly LabSweepSummary[]; readonly error: ErrorInfo | null };
    /** points ticked for the N-way comparison, by name, in the order ticked */
    readonly compared: readonly string[];
    /** the point opened in the detail panel */
    readonly opened: { readonly status: LoadStatus; readonly name: string | null; readonly record: EvalRecord | null; readonly error: ErrorInfo | null };
    /** records of compared points, by name, as they load */
    readonly records: Readonly<Record<string, EvalRecord>>;
    /** the results table's filter text and sort */
    readonly table: { readonly filter: string; readonly sortBy: string; readonly descending: boolean };
  };
  updateLabSetup(patch: Partial<Omit<LabSetup, 'vary'>>): void;
  updateLabVary(field: LabVariedField, values: string): void;
  updateLabChart(patch: Partial<LabChartChoice>): void;
  updateLabTable(patch: Partial<LabSlice['lab']['table']>): void;
  labSweepStarting(name: string, spec: SweepSpec | null): void;
  labSweepStarted(sweepId: string, total: number): void;
  labSweepProgress(progress: LabSweepProgress): void;
  labSweepPoint(row: SweepRow): void;
  labSweepDone(interrupted: boolean, rows: readonly SweepRow[]): void;
  labSweepFailed(error: ErrorInfo): void;
  labSweepStopping(): void;
  labSweepOpened(sweepId: string, name: string, spec: SweepSpec, points: readonly SweepPoint[], rows: readonly SweepRow[], complete: boolean): void;
  labHistoryLoading(): void;
  labHistoryLoaded(sweeps: readonly LabSweepSummary[]): void;
  labHistoryFailed(error: ErrorInfo): void;
  toggleLabCompare(name: string): void;
  labRecordLoaded(name: string, record: EvalRecord): void;
  labPointOpening(name: string): void;
  labPointOpened(name: string, record: EvalRecord): void;
  labPointFailed(name: string, error: ErrorInfo): void;
  closeLabPoint(): void;
}

export const DEFAULT_LAB_SETUP: LabSetup = {
  name: '',
  vary: { backend: '', nbits: '2,4', 'group-size': '', 'residual-length': '', 'axis-key': '', 'axis-value': '' },
  context: 512,
  windows: 4,
  textPath: '',
  preset: 'none',
  jobs: 1,
  includeDynamic: false,
  task: 'none',
  lengths: '1k,2k,4k',
  depths: '0,25,50,75,100',
  samples: 1,
  seed: 0,
};

const IDLE_SWEEP: LabSweepState = {
  sweepId: null, name: '', status: 'idle', interrupted: false, spec: null, points: [], total: 0, rows: [], progress: null, error: null,
};

export const createLabSlice: StateCreator<WorkbenchState, [], [], LabSlice> = (set) => {
  const patch = (update: (lab: LabSlice['lab']) => Partial<LabSlice['lab']>): void => set((state) => ({ lab: { ...state.lab, ...update(state.lab) } }));
  return {
    lab: {
      setup: DEFAULT_LAB_SETUP,
      chart: { x: 'bits', y: 'kld', logX: false, logY: true, labels: false },
      sweep: IDLE_SWEEP,
      history: { status: 'idle', sweeps: [], error: null },
      compared: [],
      opened: { status: 'idle', name: null, record: null, error: null },
      records: {},
      table: { filter: '', sortBy: 'index', descending: false },
    },
    updateLabSetup: (update) => patch((lab) => ({ setup: { ...lab.setup, ...update } })),
    updateLabVary: (field, values) => patch((lab) => ({ setup: { ...lab.setup, vary: { ...lab.setup.vary, [field]: values } } })),
    updateLabChart: (update) => patch((lab) => ({ chart: { ...lab.chart, ...update } })),
    updateLabTable: (update) => patch((lab) => ({ table: { ...lab.table, ...update } })),
    labSweepStarting: (name, spec) => patch((lab) => ({
      sweep: { ...IDLE_SWEEP, ...(spec === null ? { sweepId: lab.sweep.sweepId, spec: lab.sweep.spec, points: lab.sweep.points, rows: lab.sweep.rows } : { spec }), name, status: 'starting' },
      ...(spec === null ? {} : { compared: [], records: {}, opened: { status: 'idle', name: null, record: null, error: null } }),
    })),
    labSweepStarted: (sweepId, total) => patch((lab) => ({ sweep: { ...lab.sweep, sweepId, total, status: lab.sweep.status === 'stopping' ? 'stopping' : 'running' } })),
    labSweepProgress: (progress) => patch((lab) => ({ sweep: { ...lab.sweep, progress, total: progress.total } })),
    labSweepPoint: (row) => patch((lab) => ({ sweep: { ...lab.sweep, rows: [...lab.sweep.rows.filter((r) => r.index !== row.index), row].sort((a, b) => a.index - b.index) } })),
    labSweepDone: (interrupted, rows) => patch((lab) => ({ sweep: { ...lab.sweep, status: 'done', interrupted, rows } })),
    labSweepFailed: (error) => patch((lab) => ({ sweep: { ...lab.sweep, status: 'error', error } })),
    labSweepStopping: () => patch((lab) => ({ sweep: { ...lab.sweep, status: 'stopping' } })),
    labSweepOpened: (sweepId, name, spec, points, rows, complete) => patch(() => ({
      sweep: { ...IDLE_SWEEP, sweepId, name, spec, points, total: points.length, rows, status: 'done', interrupted: !complete },
      compared: [], records: {}, opened: { status: 'idle', name: null, record: null, error: null },
    })),
    labHistoryLoading: () => patch((lab) => ({ history: { ...lab.history, status: 'loading' } })),
    labHistoryLoaded: (sweeps) => patch(() => ({ history: { status: 'ready', sweeps, error: null } })),
    labHistoryFailed: (error) => patch((lab) => ({ history: { ...lab.history, status: 'error', error } })),
    toggleLabCompare: (name) => patch((lab) => ({ compared: lab.compared.includes(name) ? lab.compared.filter((n) => n !== name) : [...lab.compared, name] })),
    labRecordLoaded: (name, record) => patch((lab) => ({ records: { ...lab.records, [name]: record } })),
    labPointOpening: (name) => patch(() => ({ opened: { status: 'loading', name, record: null, error: null } })),
    labPointOpened: (name, record) => patch((lab) => (lab.opened.name === name ? { opened: { status: 'ready', name, record, error: null }, records: { ...lab.records, [name]: record } } : {})),
    labPointFailed: (name, error) => patch((lab) => (lab.opened.name === name ? { opened: { status: 'error', name, record: null, error } } : {})),
    closeLabPoint: () => patch(() => ({ opened: { status: 'idle', name: null, record: null, error: null } })),
  };
};
