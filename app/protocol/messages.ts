import type { z } from 'zod';
import { EXECUTION_PROVIDERS, type RunSettings } from '../engine/types.js';
import type { MessageOf, MessagesOf } from './message-table.js';
import { arraySchema, choiceSchema, countSchema, integerSchema, numberSchema, objectSchema, stringSchema } from './protocol-schema.js';
import { diagnosticSchema, type DiagnosticPayload } from './read-diagnostic.js';
import { generationResultSchema, runSettingsSchema } from './read-generation-result.js';
import { stepMetricsSchema } from './read-step-metrics.js';

/**
 * THE declaration of every message between a host (the CLI, the Electron main process, the serve
 * host) and the generation worker: one table per direction from `type` to the fields' schemas
 * (message-table.ts), from which the discriminated unions below (STYLE.md §2) and the readers every
 * receiver runs them through (parse-message.ts) follow. Adding a message is one entry here, its
 * sender and its handler. A host numbers its requests with `id` (1, 2, …); every reply carries the
 * id of the run it belongs to. Messages are pure data (structured clone, or JSON with json-numbers.ts).
 */

/** Bumped whenever a message changes shape, so a host never talks to a stale built worker. */
export const PROTOCOL_VERSION = 1;

/** Request ids start at 1; 0 marks an error that no request can be blamed for (an unreadable message). */
export type RequestId = number;
export const NO_REQUEST: RequestId = 0;

export const requestIdSchema = integerSchema(1);

/** Which model a warm worker should have ready: what a run's settings name of it. */
export type WarmTarget = Pick<RunSettings, 'model' | 'onnxFile' | 'executionProvider'>;

const warmTargetSchema: z.ZodType<WarmTarget> = objectSchema({
  model: stringSchema,
  onnxFile: stringSchema.optional(),
  executionProvider: choiceSchema(EXECUTION_PROVIDERS),
});

// ---- errors ----------------------------------------------------------------------------------

/**
 * Why a run failed, as a host can act on it:
 * - `refused`: the preflight or the model checks refuse these settings for this model (CLI exit 2);
 * - `invalid-input`: a missing or unreadable model folder, config, graph or tokenizer (CLI exit 1);
 * - `generation-failed`: the run started and a cache, quantizer or ORT call failed;
 * - `cancelled`: the run was cancelled before its worker started (a queued WebGPU run);
 * - `cancel-timeout`: the worker did not honour a cancel in time and was terminated;
 * - `worker-crashed`: the worker thread died (uncaught exception, process.exit, out of memory);
 * - `worker-busy`: a second `start` reached a worker that was already running;
 * - `protocol`: a message that does not parse (a version mismatch or a bug);
 * - `storage-failed`: a file the run writes (a record, a cache entry) could not be written: a full
 *   disk, a quota, a read-only or failing disk, no permission. Never a result: nothing was recorded,
 *   and the same run redone once the disk is fixed completes;
 * - `internal`: anything else, a bug in kvscope.
 */
export const RUN_ERROR_CODES = [
  'refused', 'invalid-input', 'generation-failed', 'cancelled', 'cancel-timeout', 'worker-crashed', 'worker-busy', 'protocol', 'storage-failed', 'internal',
] as const;
export type RunErrorCode = (typeof RUN_ERROR_CODES)[number];

/** An error as it travels: a message for people (never a stack trace), what to do, and the findings behind it. */
export interface RunErrorPayload {
  readonly code: RunErrorCode;
  readonly message: string;
  readonly fix?: string;
  /** the preflight's or the model checks' findings when they are why the run was refused */
  readonly diagnostics?: readonly DiagnosticPayload[];
}

export const runErrorPayloadSchema: z.ZodType<RunErrorPayload> = objectSchema({
  code: choiceSchema(RUN_ERROR_CODES),
  message: stringSchema,
  fix: stringSchema.optional(),
  diagnostics: arraySchema(diagnosticSchema).optional(),
});

// ---- host → worker ---------------------------------------------------------------------------

export const HOST_MESSAGES = {
  /** Start one generation run. A worker runs one at a time; a second start is refused (`worker-busy`). */
  start: objectSchema({ id: requestIdSchema, settings: runSettingsSchema }),
  /** Stop run `id` at the next step boundary; the run then ends with `done` and stopReason `cancelled`. */
  cancel: objectSchema({ id: requestIdSchema }),
  /**
   * Load this model now (its files, tokenizer and session), so that the next run on it starts at once:
   * the worker keeps it warm between runs. Answered by `warmed`, or `error` when the model cannot load.
   */
  warm: objectSchema({ id: requestIdSchema, target: warmTargetSchema }),
} as const;

export type HostMessage = MessagesOf<typeof HOST_MESSAGES>;
export type StartMessage = MessageOf<typeof HOST_MESSAGES, 'start'>;
export type CancelMessage = MessageOf<typeof HOST_MESSAGES, 'cancel'>;
export type WarmMessage = MessageOf<typeof HOST_MESSAGES, 'warm'>;

// ---- worker → host ---------------------------------------------------------------------------

/**
 * The two messages every kvscope worker sends (this protocol's and the lab's, app/lab/lab-protocol.ts),
 * which the one supervisor (app/node/worker/worker-supervisor.ts) reads alike: `ready` with the
 * protocol version, and a request's `error`, id 0 (NO_REQUEST) when the worker could not tell which.
 */
export const workerReadySchema = objectSchema({ protocolVersion: countSchema });
export const workerErrorSchema = objectSchema({ id: countSchema, error: runErrorPayloadSchema });

export const WORKER_MESSAGES = {
  /** The worker is up and speaks `protocolVersion`. */
  ready: workerReadySchema,
  /**
   * Per-step metrics, batched by time so that posting never slows generation (see stream-batcher.ts).
   * The hot path: a batch every 80 ms, read in full (measured: bench/protocol.ts).
   */
  metrics: objectSchema({ id: requestIdSchema, steps: arraySchema(stepMetricsSchema) }),
  /** Newly decoded text and the tokens that completed it, batched like the metrics. */
  text: objectSchema({ id: requestIdSchema, delta: stringSchema, tokenIds: arraySchema(countSchema) }),
  /** The run's last message when it finished or was cancelled; every text and metrics batch came before it. */
  done: objectSchema({ id: requestIdSchema, result: generationResultSchema }),
  /** The run's last message when it failed; id 0 (NO_REQUEST) when the worker could not tell which request failed. */
  error: workerErrorSchema,
  /** The model of `warm` request `id` is loaded; `loadMs` is how long that took (0 when it already was). */
  warmed: objectSchema({ id: requestIdSchema, loadMs: numberSchema }),
} as const;

export type WorkerMessage = MessagesOf<typeof WORKER_MESSAGES>;
export type ReadyMessage = MessageOf<typeof WORKER_MESSAGES, 'ready'>;
export type MetricsMessage = MessageOf<typeof WORKER_MESSAGES, 'metrics'>;
export type TextMessage = MessageOf<typeof WORKER_MESSAGES, 'text'>;
export type DoneMessage = MessageOf<typeof WORKER_MESSAGES, 'done'>;
export type ErrorMessage = MessageOf<typeof WORKER_MESSAGES, 'error'>;
export type WarmedMessage = MessageOf<typeof WORKER_MESSAGES, 'warmed'>;

/** The one union of the protocol. */
export type ProtocolMessage = HostMessage | WorkerMessage;
