import type { ApiCommandEvent, ApiRunEvent } from './api-events.js';
import type { RequestId } from './messages.js';
import type { LabApiEvent, LabApiRequest, LabApiResults } from '../lab/lab-api-messages.js';
import type { RequestsOf, ResultsOf } from './api-declaration.js';
import type { WORKBENCH_METHODS } from './api-methods.js';

/**
 * Every message between the renderer and its host (the Electron main process or the serve-mode
 * WebSocket server) that carries the WorkbenchApi: one discriminated union on `type` (STYLE.md §2),
 * next to the worker protocol in messages.ts. The requests and results follow from the declaration
 * of the methods (api-methods.ts); the events a host sends are listed here. The client numbers its requests with `id` (1, 2, …);
 * the host answers each with exactly one `result` or `error` carrying the same id, and streams a
 * run's events with the id of the `start-run` request that began it, so a client can route them
 * before it even has the ticket. The host runs every request through parse-api-message.ts first.
 * Messages are pure data: structured clone (Electron IPC) or JSON with json-numbers.ts (WebSocket).
 */

/** Bumped whenever a message changes shape. */
export const API_PROTOCOL_VERSION = 1;

// ---- client → host ---------------------------------------------------------------------------

/** Every request: one per method declared in api-methods.ts (and the Lab's, app/lab/lab-api-methods.ts). */
export type ApiRequest = RequestsOf<typeof WORKBENCH_METHODS> | LabApiRequest;

export type ApiRequestType = ApiRequest['type'];

/** What each request's `result` carries (from the declaration). */
export type ApiResults = ResultsOf<typeof WORKBENCH_METHODS> & LabApiResults;

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

/** Events of the run started by request `id`, in order (declared in api-events.ts); `run-done` or `run-error` is the last. */
export type { ApiRunEvent };

/** An application menu command or a dropped folder (Electron), declared in api-events.ts. */
export type { ApiCommandEvent };

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
