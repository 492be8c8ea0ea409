import type { GenerationResult } from '../engine/generation-result.js';
import type { RunSettings, StepMetrics } from '../engine/types.js';
import type { DiagnosticPayload } from './read-diagnostic.js';

/**
 * Every message between a host (the CLI, the Electron main process, later the serve host) and the
 * generation worker: one discriminated union on `type`, imported by all sides (STYLE.md §2). A host
 * numbers its requests with `id` (1, 2, …); every reply carries the id of the run it belongs to.
 * Messages are pure data (structured clone, or JSON with json-numbers.ts), and every receiver runs
 * them through parse-message.ts first.
 */

/** Bumped whenever a message changes shape, so a host never talks to a stale built worker. */
export const PROTOCOL_VERSION = 1;

/** Request ids start at 1; 0 marks an error that no request can be blamed for (an unreadable message). */
export type RequestId = number;
export const NO_REQUEST: RequestId = 0;

// ---- host → worker ---------------------------------------------------------------------------

/** Start one generation run. A worker runs one at a time; a second start is refused (`worker-busy`). */
export interface StartMessage {
  readonly type: 'start';
  readonly id: RequestId;
  readonly settings: RunSettings;
}

/** Stop run `id` at the next step boundary; the run then ends with `done` and stopReason `cancelled`. */
export interface CancelMessage {
  readonly type: 'cancel';
  readonly id: RequestId;
}

/** Which model a warm worker should have ready: what a run's settings name of it. */
export type WarmTarget = Pick<RunSettings, 'model' | 'onnxFile' | 'executionProvider'>;

/**
 * Load this model now (its files, tokenizer and session), so that the next run on it starts at once:
 * the worker keeps it warm between runs. Answered by `warmed`, or `error` when the model cannot load.
 */
export interface WarmMessage {
  readonly type: 'warm';
  readonly id: RequestId;
  readonly target: WarmTarget;
}

export type HostMessage = StartMessage | CancelMessage | WarmMessage;

// ---- worker → host ---------------------------------------------------------------------------

/** The worker is up and speaks `protocolVersion`. */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly protocolVersion: number;
}

/** Per-step metrics, batched by time so that posting never slows generation (see stream-batcher.ts). */
export interface MetricsMessage {
  readonly type: 'metrics';
  readonly id: RequestId;
  readonly steps: readonly StepMetrics[];
}

/** Newly decoded text and the tokens that completed it, batched like the metrics. */
export interface TextMessage {
  readonly type: 'text';
  readonly id: RequestId;
  readonly delta: string;
  readonly tokenIds: readonly number[];
}

/** The run's last message when it finished or was cancelled; every text and metrics batch came before it. */
export interface DoneMessage {
  readonly type: 'done';
  readonly id: RequestId;
  readonly result: GenerationResult;
}

/** The run's last message when it failed. */
export interface ErrorMessage {
  readonly type: 'error';
  readonly id: RequestId;
  readonly error: RunErrorPayload;
}

/** The model of `warm` request `id` is loaded; `loadMs` is how long that took (0 when it already was). */
export interface WarmedMessage {
  readonly type: 'warmed';
  readonly id: RequestId;
  readonly loadMs: number;
}

export type WorkerMessage = ReadyMessage | MetricsMessage | TextMessage | DoneMessage | ErrorMessage | WarmedMessage;

/** The one union of the protocol. */
export type ProtocolMessage = HostMessage | WorkerMessage;

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
