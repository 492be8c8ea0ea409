import type { z } from 'zod';
import type { MessageOf, MessagesOf } from '../protocol/message-table.js';
import { workerErrorSchema, workerReadySchema } from '../protocol/messages.js';
import {
  booleanSchema, choiceSchema, countSchema, integerSchema, numberSchema, objectSchema, readerSchema, stringSchema,
} from '../protocol/protocol-schema.js';
import type { EvalProgress } from './evaluate.js';
import type { EvalResult } from './eval-result.js';
import type { EvalSettings } from './eval-settings.js';
import { readEvalResult, readEvalSettings } from './read-eval.js';

/**
 * THE declaration of every message between a host (the CLI's eval and sweep, the workbench's Lab
 * view) and a lab worker thread, as app/protocol/messages.ts declares the generation worker's: one
 * table per direction, from which the unions and parse-lab-message.ts's readers follow. A lab worker
 * takes jobs one after another and keeps its session warm between them (app/node/ort/session-cache.ts),
 * so a sweep loads its model once per worker. Messages are pure data, and every receiver runs them
 * through parse-lab-message.ts first.
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

const jobIdSchema = integerSchema(1);

/** What the job's settings and result are read with: their readers are shared with eval records (read-eval.ts). */
const evalSettingsSchema = readerSchema<EvalSettings>(readEvalSettings);
const evalResultSchema = readerSchema<EvalResult>(readEvalResult);

const jobOptionsSchema: z.ZodType<LabJobOptions> = objectSchema({
  intraOpNumThreads: integerSchema(1).optional(),
  sweepJobs: integerSchema(1).optional(),
  perToken: booleanSchema.optional(),
});

const progressSchema: z.ZodType<EvalProgress> = objectSchema({
  phase: choiceSchema(['reference', 'eval']),
  windowsDone: countSchema,
  windows: countSchema,
});

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

const referenceSummarySchema: z.ZodType<ReferenceSummary> = objectSchema({
  key: stringSchema,
  cached: booleanSchema,
  ms: numberSchema,
  windowsComputed: countSchema.optional(),
  bytes: countSchema.optional(),
});

// ---- host → worker ---------------------------------------------------------------------------

export const LAB_HOST_MESSAGES = {
  /** Evaluate one configuration; ends with `evaluated` or `error`. */
  evaluate: objectSchema({ id: jobIdSchema, settings: evalSettingsSchema, options: jobOptionsSchema }),
  /** Make sure the reference of these settings' model, text and windows is stored; ends with `referenced` or `error`. */
  reference: objectSchema({ id: jobIdSchema, settings: evalSettingsSchema, options: jobOptionsSchema }),
  /** Stop job `id` before its next run; it ends with an `error` of code `cancelled`. */
  cancel: objectSchema({ id: jobIdSchema }),
} as const;

export type LabHostMessage = MessagesOf<typeof LAB_HOST_MESSAGES>;
export type EvaluateMessage = MessageOf<typeof LAB_HOST_MESSAGES, 'evaluate'>;
export type ReferenceMessage = MessageOf<typeof LAB_HOST_MESSAGES, 'reference'>;
export type LabCancelMessage = MessageOf<typeof LAB_HOST_MESSAGES, 'cancel'>;

// ---- worker → host ---------------------------------------------------------------------------

export const LAB_WORKER_MESSAGES = {
  ready: workerReadySchema,
  /** After each window of the reference or the evaluation. */
  progress: objectSchema({ id: jobIdSchema, progress: progressSchema }),
  evaluated: objectSchema({ id: jobIdSchema, result: evalResultSchema }),
  referenced: objectSchema({ id: jobIdSchema, reference: referenceSummarySchema }),
  /** id 0 (NO_REQUEST): the worker could not tell which job failed */
  error: workerErrorSchema,
} as const;

export type LabWorkerMessage = MessagesOf<typeof LAB_WORKER_MESSAGES>;
export type LabReadyMessage = MessageOf<typeof LAB_WORKER_MESSAGES, 'ready'>;
export type LabProgressMessage = MessageOf<typeof LAB_WORKER_MESSAGES, 'progress'>;
export type EvaluatedMessage = MessageOf<typeof LAB_WORKER_MESSAGES, 'evaluated'>;
export type ReferencedMessage = MessageOf<typeof LAB_WORKER_MESSAGES, 'referenced'>;
export type LabErrorMessage = MessageOf<typeof LAB_WORKER_MESSAGES, 'error'>;
