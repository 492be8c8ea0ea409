import { KvscopeError } from '../errors.js';
import type { RunErrorCode, RunErrorPayload } from './messages.js';
import { arrayReader } from './field-readers.js';
import { readDiagnostic, type DiagnosticPayload } from './read-diagnostic.js';

/**
 * A run that ended in failure, as a host sees it: rebuilt from the worker's `error` message, or
 * raised by the host itself (crash, cancel timeout). `code` says what kind of failure it is, so a
 * caller branches on it instead of parsing the message.
 */
export class RunError extends KvscopeError {
  override readonly name = 'RunError';
  readonly code: RunErrorCode;
  readonly fix: string | undefined;
  readonly diagnostics: readonly DiagnosticPayload[];

  constructor(payload: RunErrorPayload) {
    super(payload.message);
    this.code = payload.code;
    this.fix = payload.fix;
    this.diagnostics = payload.diagnostics ?? [];
  }

  toPayload(): RunErrorPayload {
    return {
      code: this.code,
      message: this.message,
      ...(this.fix !== undefined ? { fix: this.fix } : {}),
      ...(this.diagnostics.length > 0 ? { diagnostics: this.diagnostics } : {}),
    };
  }
}

/** Errors about the inputs themselves: the user fixes a path, a file or a flag. */
const INPUT_ERROR_NAMES: ReadonlySet<string> = new Set(['ConfigError', 'ModelLoadError', 'NpyFormatError', 'OnnxFormatError', 'UsageError', 'TokenizerError', 'FileAccessError', 'GuardedFileError', 'EvalInputError', 'PromptLengthError']);

/**
 * Turns whatever a run threw into the payload the worker sends. Only the message travels, never a
 * stack (STYLE.md §9): the user reads it, and a stack of the worker's internals helps nobody there.
 * The classification goes by the error's `name` so that this pure module does not import every
 * domain's error classes; an error that carries `diagnostics` and is named `…RefusedError` is a
 * refusal (the engine's typed preflight error).
 */
export function toRunErrorPayload(error: unknown): RunErrorPayload {
  if (error instanceof RunError) return error.toPayload();
  if (!(error instanceof Error)) return { code: 'internal', message: `The run failed with a non-Error value: ${String(error)}` };
  const message = withoutStack(error.message) || error.name;
  const fixField = (error as { fix?: unknown }).fix;
  const fix = typeof fixField === 'string' ? fixField : undefined;
  const diagnostics = diagnosticsOf(error);
  const code = classify(error);
  return {
    code,
    message: code === 'internal' ? `${error.name}: ${message}` : message,
    ...(fix !== undefined ? { fix } : {}),
    ...(diagnostics !== undefined ? { diagnostics } : {}),
  };
}

function classify(error: Error): RunErrorCode {
  if (error.name.endsWith('RefusedError')) return 'refused';
  // app/node/fs-errors.ts: a write that failed on the disk, not on the user's input
  if (error.name === 'StorageWriteError') return 'storage-failed';
  if (INPUT_ERROR_NAMES.has(error.name)) return 'invalid-input';
  // A kvscope domain error (cache, quantizer, generation) explains itself; anything else (a
  // TypeError, an ORT failure) is unexpected and keeps its class name in the message.
  return error instanceof KvscopeError ? 'generation-failed' : 'internal';
}

/** Drops `    at …` frames that some libraries (ORT among them) fold into the message itself. */
export function withoutStack(message: string): string {
  return message
    .split('\n')
    .filter((line) => !/^\s+at\s/.test(line))
    .join('\n')
    .trim();
}

function diagnosticsOf(error: Error): DiagnosticPayload[] | undefined {
  const diagnostics = (error as { diagnostics?: unknown }).diagnostics;
  if (diagnostics === undefined) return undefined;
  // Read, not cast: the copy keeps only the payload's fields (all structured-clone safe), and a
  // malformed list is dropped rather than turning the real error into a protocol error.
  try {
    return arrayReader(readDiagnostic)(diagnostics, 'diagnostics');
  } catch {
    return undefined;
  }
}
