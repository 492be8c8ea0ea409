import { KvscopeError } from '../errors.js';
import type { ApiErrorCode, ApiErrorPayload } from './api-messages.js';
import { withoutStack } from './run-error.js';

/**
 * A WorkbenchApi call that failed, as the renderer sees it: rebuilt from the host's `error` reply,
 * or raised by a host for a request it refuses. `code` says what kind of failure it is, so the UI
 * branches on it instead of parsing the message; `fix` says what to do.
 */
export class ApiError extends KvscopeError {
  override readonly name = 'ApiError';
  readonly code: ApiErrorCode;
  readonly fix: string | undefined;

  constructor(payload: ApiErrorPayload) {
    super(payload.message);
    this.code = payload.code;
    this.fix = payload.fix;
  }

  toPayload(): ApiErrorPayload {
    return { code: this.code, message: this.message, ...(this.fix !== undefined ? { fix: this.fix } : {}) };
  }
}

/**
 * Turns whatever a host operation threw into the payload it sends. Only the message travels, never a
 * stack (STYLE.md §9). kvscope's own errors explain themselves and are the user's to fix (a path, a
 * file, a setting); anything else is unexpected and keeps its class name.
 */
export function toApiErrorPayload(error: unknown): ApiErrorPayload {
  if (error instanceof ApiError) return error.toPayload();
  if (!(error instanceof Error)) return { code: 'internal', message: `The request failed with a non-Error value: ${String(error)}` };
  const message = withoutStack(error.message) || error.name;
  const fixField = (error as { fix?: unknown }).fix;
  const fix = typeof fixField === 'string' ? { fix: fixField } : {};
  if (error.name === 'ApiProtocolError') return { code: 'invalid-request', message, ...fix };
  if (error instanceof KvscopeError) return { code: 'invalid-input', message, ...fix };
  return { code: 'internal', message: `${error.name}: ${message}`, ...fix };
}
