import type { RunErrorPayload } from '../protocol/messages.js';
import type { ClientOf } from '../protocol/api-declaration.js';
import type { LAB_METHODS, LabSweepSettings } from './lab-api-methods.js';
import type { SweepPoint } from './sweep-points.js';
import type { SweepResults, SweepRow } from './sweep-results.js';
import type { SweepSpec } from './sweep-spec.js';

/**
 * What the workbench's Lab view may ask of the engine (WorkbenchApi's `lab`): sweeps run by the host
 * (an evaluation is a sweep of one point), saved in its data folder as sweep folders like the CLI's
 * (docs/eval-record.md), listed, reopened, resumed, exported. Every value is plain data; the host
 * validates every request. One function per method declared in lab-api-methods.ts.
 */
export type LabApi = ClientOf<typeof LAB_METHODS>;

export type LabSweepRequest =
  /** a new sweep: its typed settings (the host makes its spec, lab-sweep-spec.ts) and how many points run side by side */
  | { readonly kind: 'new'; readonly name: string; readonly settings: LabSweepSettings; readonly jobs: number }
  /** the saved sweep `sweepId`, again: its complete points are kept */
  | { readonly kind: 'resume'; readonly sweepId: string; readonly jobs: number };

export interface LabSweepTicket {
  readonly sweepId: string;
  /** points of the sweep, and how many were complete before this run */
  readonly points: number;
  readonly complete: number;
}

export interface LabSweepProgress {
  /** complete points (this run's and earlier ones') */
  readonly done: number;
  readonly total: number;
  /** names of the points running now */
  readonly running: readonly string[];
}

export interface LabSweepHandlers {
  onProgress(progress: LabSweepProgress): void;
  /** a point finished (measured, refused or failed): its results row */
  onPoint(row: SweepRow): void;
  onDone(outcome: { readonly interrupted: boolean; readonly results: SweepResults }): void;
  onError(error: RunErrorPayload): void;
}

export type LabSweepStatus = 'running' | 'complete' | 'partial';

/** A saved sweep as the history lists it. */
export interface LabSweepSummary {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
  readonly model: string;
  readonly points: number;
  readonly complete: number;
  readonly status: LabSweepStatus;
  readonly preset: string | null;
  /** the values the sweep's points take, for filtering */
  readonly backends: readonly string[];
  readonly nbits: readonly number[];
  readonly groupSizes: readonly number[];
  readonly axes: readonly string[];
  readonly residualLengths: readonly number[];
  /** the best mean KLD and top-1 agreement among its measured quantized points, the reference (dynamic cache) left out (sweep-best.ts); null before any */
  readonly bestKld: number | null;
  readonly bestTop1: number | null;
}

export interface LabSweepView {
  readonly summary: LabSweepSummary;
  readonly spec: SweepSpec;
  readonly points: readonly SweepPoint[];
  readonly results: SweepResults;
}

/** A sweep id names a folder in the data folder: the run store's id pattern. */
export const SWEEP_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** A point's name is its folder's (sweep-points.ts keeps them to these characters). */
export const POINT_NAME_PATTERN = /^[A-Za-z0-9._=-]{1,200}$/;
