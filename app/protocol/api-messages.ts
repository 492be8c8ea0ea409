import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { GenerationResult } from '../engine/generation-result.js';
import type { RunSettings, StepMetrics } from '../engine/types.js';
import type { RunCheck } from '../preflight/check-run.js';
import type { PreflightResult } from '../preflight/run-preflight.js';
import type { RunRecord } from '../record/run-record.js';
import type { RequestId, RunErrorPayload } from './messages.js';
import type { LabApiEvent, LabApiRequest, LabApiResults } from '../lab/lab-api-messages.js';
import type {
  FolderListing, HistoryEntry, ModelSource, ModelSummary, RunExport, RunExportFormat, RunTicket, WorkbenchCommand, WorkbenchEnvironment,
} from './workbench-api.js';

/**
 * Every message between the renderer and its host (the Electron main process or the serve-mode
 * WebSocket server) that carries the WorkbenchApi: one discriminated union on `type` (STYLE.md §2),
 * next to the worker protocol in messages.ts. The client numbers its requests with `id` (1, 2, …);
 * the host answers each with exactly one `result` or `error` carrying the same id, and streams a
 * run's events with the id of the `start-run` request that began it, so a client can route them
 * before it even has the ticket. The host runs every request through parse-api-message.ts first.
 * Messages are pure data: structured clone (Electron IPC) or JSON with json-numbers.ts (WebSocket).
 */

/** Bumped whenever a message changes shape. */
export const API_PROTOCOL_VERSION = 1;

// ---- client → host ---------------------------------------------------------------------------

export type ApiRequest =
  | { readonly type: 'environment'; readonly id: RequestId }
  | { readonly type: 'open-model'; readonly id: RequestId; readonly source: ModelSource; readonly onnxFile?: string }
  | { readonly type: 'pick-model-folder'; readonly id: RequestId }
  | {
    readonly type: 'preflight';
    readonly id: RequestId;
    readonly model: ModelSource;
    readonly settings: QuantizedCacheSettings;
    readonly sequenceLengths?: readonly number[];
  }
  | { readonly type: 'check-run'; readonly id: RequestId; readonly settings: RunSettings }
  | { readonly type: 'list-folder'; readonly id: RequestId; readonly path: string | null; readonly offset?: number }
  | { readonly type: 'start-run'; readonly id: RequestId; readonly settings: RunSettings }
  /** the explicit cancel variant: stops run `runId` at its next step (its events end with `run-done`, stopReason `cancelled`) */
  | { readonly type: 'cancel-run'; readonly id: RequestId; readonly runId: string }
  | { readonly type: 'list-runs'; readonly id: RequestId }
  | { readonly type: 'load-run'; readonly id: RequestId; readonly runId: string }
  | { readonly type: 'delete-run'; readonly id: RequestId; readonly runId: string }
  | { readonly type: 'export-run'; readonly id: RequestId; readonly runId: string; readonly format: RunExportFormat }
  | { readonly type: 'recent-models'; readonly id: RequestId }
  // the Lab view's sweeps (app/lab/lab-api-messages.ts)
  | LabApiRequest;

export type ApiRequestType = ApiRequest['type'];

/** What each request's `result` carries. */
export interface ApiResults extends LabApiResults {
  readonly 'environment': WorkbenchEnvironment;
  readonly 'open-model': ModelSummary;
  readonly 'pick-model-folder': string | null;
  readonly 'preflight': PreflightResult;
  readonly 'check-run': RunCheck;
  readonly 'list-folder': FolderListing;
  readonly 'start-run': RunTicket;
  readonly 'cancel-run': null;
  readonly 'list-runs': HistoryEntry[];
  readonly 'load-run': RunRecord;
  readonly 'delete-run': null;
  readonly 'export-run': RunExport;
  readonly 'recent-models': ModelSource[];
}

/** A request as a client builds it, before it is numbered. */
export type ApiRequestBody<T extends ApiRequestType = ApiRequestType> = T extends ApiRequestType
  ? Omit<Extract<ApiRequest, { type: T }>, 'id'>
  : never;

// ---- host → client ---------------------------------------------------------------------------

export interface ApiResultMessage<T extends ApiRequestType = ApiRequestType> {
  readonly type: 'result';
  readonly id: RequestId;
  readonly value: ApiResults[T];
}

/** The request failed; `id` is 0 (NO_REQUEST) when the request was too malformed to carry one. */
export interface ApiErrorMessage {
  readonly type: 'error';
  readonly id: RequestId;
  readonly error: ApiErrorPayload;
}

export type ApiResponse = ApiResultMessage | ApiErrorMessage;

/** Events of the run started by request `id`, in order; `run-done` or `run-error` is the last. */
export type ApiRunEvent =
  | { readonly type: 'run-text'; readonly id: RequestId; readonly runId: string; readonly delta: string; readonly tokenIds: readonly number[] }
  | { readonly type: 'run-metrics'; readonly id: RequestId; readonly runId: string; readonly steps: readonly StepMetrics[] }
  | { readonly type: 'run-done'; readonly id: RequestId; readonly runId: string; readonly result: GenerationResult; readonly savedRunId: string | null }
  | { readonly type: 'run-error'; readonly id: RequestId; readonly runId: string; readonly error: RunErrorPayload };

/** An application menu command or a dropped folder (Electron). */
export interface ApiCommandEvent {
  readonly type: 'command';
  readonly command: WorkbenchCommand;
}

export type ApiEvent = ApiRunEvent | ApiCommandEvent | LabApiEvent;

/** Everything a host sends. */
export type ApiHostMessage = ApiResponse | ApiEvent;

/** The one union of the API transport. */
export type ApiMessage = ApiRequest | ApiHostMessage;

// ---- errors ----------------------------------------------------------------------------------

/**
 * Why a request failed, as the UI can act on it:
 * - `invalid-request`: not a member of this protocol, or a malformed field (a bug or a stale page);
 * - `invalid-input`: the request was well formed but names something unusable (a missing folder, an
 *   unreadable config.json, an unknown run id); the message says what, `fix` what to do;
 * - `unsupported`: this host cannot do it (a native dialog in the browser);
 * - `unauthorized`: the sender is not the workbench's own page;
 * - `internal`: anything else, a bug in kvscope.
 */
export const API_ERROR_CODES = ['invalid-request', 'invalid-input', 'unsupported', 'unauthorized', 'internal'] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/** An error as it travels: a message for people (never a stack trace) and what to do. */
export interface ApiErrorPayload {
  readonly code: ApiErrorCode;
  readonly message: string;
  readonly fix?: string;
}
