import type { RunErrorPayload } from '../protocol/messages.js';
import type { EvalProgress } from './evaluate.js';
import type { EvalResult } from './eval-result.js';
import type { EvalSettings } from './eval-settings.js';

/**
 * Every message between a host (the CLI's eval and sweep, the workbench's Lab view) and a lab worker
 * thread: one discriminated union on `type`. A lab worker takes jobs one after another and keeps its
 * session warm between them (app/node/ort/session-cache.ts), so a sweep loads its model once per
 * worker. Messages are pure data, and every receiver runs them through parse-lab-message.ts first.
 */
export const LAB_PROTOCOL_VERSION = 1;

export interface LabJobOptions {
  /** at most this many ORT intra-op threads for the session (the host splits the cores between its workers) */
  readonly intraOpNumThreads?: number;
  /** a sweep's job, of a sweep with this many jobs: its sessions read the weights in place, without ORT's arena where jobs > 1 (ort-decoder-session.ts SessionSharing) */
  readonly sweepJobs?: number;
  /** keep per-token columns in the result */
  readonly perToken?: boolean;
}

// ---- host → worker ---------------------------------------------------------------------------

/** Evaluate one configuration; ends with `evaluated` or `error`. */
export interface EvaluateMessage {
  readonly type: 'evaluate';
  readonly id: number;
  readonly settings: EvalSettings;
  readonly options: LabJobOptions;
}

/** Make sure the reference of these settings' model, text and windows is stored; ends with `referenced` or `error`. */
export interface ReferenceMessage {
  readonly type: 'reference';
  readonly id: number;
  readonly settings: EvalSettings;
  readonly options: LabJobOptions;
}

/** Stop job `id` before its next run; it ends with an `error` of code `cancelled`. */
export interface LabCancelMessage {
  readonly type: 'cancel';
  readonly id: number;
}

export type LabHostMessage = EvaluateMessage | ReferenceMessage | LabCancelMessage;

// ---- worker → host ---------------------------------------------------------------------------

export interface LabReadyMessage {
  readonly type: 'ready';
  readonly protocolVersion: number;
}

/** After each window of the reference or the evaluation. */
export interface LabProgressMessage {
  readonly type: 'progress';
  readonly id: number;
  readonly progress: EvalProgress;
}

export interface EvaluatedMessage {
  readonly type: 'evaluated';
  readonly id: number;
  readonly result: EvalResult;
}

/** A reference made sure of (before a sweep's points): its key, whether it was all cached, how long it took, and its size on disk. */
export interface ReferenceSummary {
  readonly key: string;
  readonly cached: boolean;
  readonly ms: number;
  /** windows computed and stored now (absent from hosts that do not say) */
  readonly windowsComputed?: number;
  /** the stored reference's size on disk, in bytes */
  readonly bytes?: number;
}

export interface ReferencedMessage {
  readonly type: 'referenced';
  readonly id: number;
  readonly reference: ReferenceSummary;
}

export interface LabErrorMessage {
  readonly type: 'error';
  readonly id: number;
  readonly error: RunErrorPayload;
}

export type LabWorkerMessage = LabReadyMessage | LabProgressMessage | EvaluatedMessage | ReferencedMessage | LabErrorMessage;
