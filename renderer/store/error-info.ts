import type { RunErrorPayload } from '../../app/protocol/messages.js';
import type { DiagnosticPayload } from '../../app/protocol/read-diagnostic.js';

/** An error as the UI shows it: a code, a sentence for people, what to do, and the findings behind it. Never a stack. */
export interface ErrorInfo {
  readonly code: string;
  readonly message: string;
  readonly fix?: string;
  readonly diagnostics?: readonly DiagnosticPayload[];
}

export function fromRunError(payload: RunErrorPayload): ErrorInfo {
  return {
    code: payload.code,
    message: payload.message,
    ...(payload.fix !== undefined ? { fix: payload.fix } : {}),
    ...(payload.diagnostics !== undefined ? { diagnostics: payload.diagnostics } : {}),
  };
}

/**
 * Anything thrown by an API call, as an ErrorInfo. Only the message travels: hosts put what to do in
 * it (STYLE.md §9), and a stack trace is of no use to the person looking at the workbench.
 */
export function fromThrown(error: unknown, code = 'internal', fix?: string): ErrorInfo {
  const record = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : null;
  const message = record !== null && typeof record['message'] === 'string' ? record['message'] : String(error);
  const ownCode = record !== null && typeof record['code'] === 'string' ? record['code'] : code;
  const ownFix = record !== null && typeof record['fix'] === 'string' ? record['fix'] : fix;
  return { code: ownCode, message: firstParagraph(message), ...(ownFix !== undefined ? { fix: ownFix } : {}) };
}

/** Drops anything that looks like a stack trace (`    at f (file:1:2)` lines). */
function firstParagraph(message: string): string {
  const lines = message.split('\n').filter((line) => !/^\s+at\s/.test(line));
  return lines.join('\n').trim() || 'Unknown error';
}
