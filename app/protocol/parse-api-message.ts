import { KvscopeError } from '../errors.js';
import { RUN_ID_PATTERN } from '../record/run-record.js';
import {
  FieldError, arrayReader, describeValue, choiceReader, integerReader, nullableReader, readCount, readObject, readString, rejectField, withOptional,
  type ObjectFields, type Read,
} from './field-readers.js';
import {
  API_ERROR_CODES, type ApiErrorPayload, type ApiHostMessage, type ApiRequest,
} from './api-messages.js';
import { readRunErrorPayload } from './parse-message.js';
import { readGenerationResult } from './read-generation-result.js';
import { readQuantizedCacheSettings, readRunSettings } from './read-run-settings.js';
import { readStepMetrics } from './read-step-metrics.js';
import { RUN_EXPORT_FORMATS, type ModelSource, type WorkbenchCommand } from './workbench-api.js';
import { isLabEventType, isLabRequestType, readLabApiEvent, readLabApiRequest } from '../lab/lab-api-messages.js';

/** A message that is not a member of the API protocol, or a member with a malformed field. */
export class ApiProtocolError extends KvscopeError {
  override readonly name = 'ApiProtocolError';
  constructor(message: string, readonly requestId: number) {
    super(message);
  }
}

const readRequestId = integerReader(1);

/** A run id names a file in the run store, so it is held to the store's pattern here already. */
export const readRunId: Read<string> = (value, path) => {
  const id = readString(value, path);
  return RUN_ID_PATTERN.test(id) ? id : rejectField(path, 'a run id (letters, digits, ".", "_" and "-")', value);
};

/** Paths are strings without NUL (which no file system accepts and some APIs truncate at). */
const readPath: Read<string> = (value, path) => {
  const text = readString(value, path);
  return text.length > 0 && !text.includes('\0') ? text : rejectField(path, 'a non-empty path', value);
};

export const readModelSource: Read<ModelSource> = (value, path) => {
  const fields = readObject(value, path);
  const kind = fields.get('kind', choiceReader(['folder', 'synthetic', 'synthetic-hybrid'] as const));
  return kind === 'folder' ? { kind, path: fields.get('path', readPath) } : { kind };
};

export const readWorkbenchCommand: Read<WorkbenchCommand> = (value, path) => {
  const fields = readObject(value, path);
  const type = fields.get('type', choiceReader(['open-model', 'open-recent', 'model-dropped', 'run', 'stop', 'export'] as const));
  switch (type) {
    case 'open-recent':
      return { type, source: fields.get('source', readModelSource) };
    case 'model-dropped':
      return { type, path: fields.get('path', readPath) };
    case 'export':
      return { type, format: fields.get('format', choiceReader(['json', 'csv'] as const)) };
    default:
      return { type };
  }
};

export const readApiErrorPayload: Read<ApiErrorPayload> = (value, path) => {
  const fields = readObject(value, path);
  return {
    code: fields.get('code', choiceReader(API_ERROR_CODES)),
    message: fields.get('message', readString),
    ...withOptional('fix', fields.optional('fix', readString)),
  };
};

/**
 * Checks a request field by field and returns a typed copy with only the known fields. Everything a
 * page sends is untrusted at the host: a stale page, a bug, or (in serve mode) anything that got
 * hold of the socket. Throws ApiProtocolError, carrying the request id when one could be read.
 */
export function parseApiRequest(value: unknown): ApiRequest {
  return parseWith(value, 'page', (fields, type) => {
    const id = fields.get('id', readRequestId);
    switch (type) {
      case 'environment':
      case 'pick-model-folder':
      case 'list-runs':
      case 'recent-models':
        return { type, id };
      case 'open-model':
        return { type, id, source: fields.get('source', readModelSource), ...withOptional('onnxFile', fields.optional('onnxFile', readPath)) };
      case 'preflight':
        return {
          type, id,
          model: fields.get('model', readModelSource),
          settings: fields.get('settings', readQuantizedCacheSettings),
          // Any integers: the preflight itself reports lengths below 1 as diagnostics.
          ...withOptional('sequenceLengths', fields.optional('sequenceLengths', arrayReader(integerReader(Number.MIN_SAFE_INTEGER)))),
        };
      case 'start-run':
      case 'check-run':
        return { type, id, settings: fields.get('settings', readRunSettings) };
      case 'list-folder':
        return { type, id, path: fields.get('path', nullableReader(readPath)), ...withOptional('offset', fields.optional('offset', readCount)) };
      case 'cancel-run':
      case 'load-run':
      case 'delete-run':
        return { type, id, runId: fields.get('runId', readRunId) };
      case 'export-run': {
        const request: ApiRequest = { type, id, runId: fields.get('runId', readRunId), format: fields.get('format', choiceReader(RUN_EXPORT_FORMATS)) };
        return request;
      }
      default:
        // The Lab's requests (app/lab/lab-api-messages.ts; the host checks a sweep spec against eval's options).
        if (isLabRequestType(type)) return readLabApiRequest(fields, type, id);
        throw new ApiProtocolError(`Unsupported request type ${describeValue(type)}.`, id);
    }
  });
}

/**
 * Checks what a host sent (serve mode: a JSON frame). Run events are read in full, which also turns
 * JSON's `"Infinity"` back into numbers (json-numbers.ts); a `result` value is passed on as is,
 * because its shape depends on the request it answers (see the WebSocket client).
 */
export function parseApiHostMessage(value: unknown): ApiHostMessage {
  return parseWith(value, 'host', (fields, type) => {
    switch (type) {
      case 'result':
        return { type, id: fields.get('id', readRequestId), value: fields.get('value', (field) => field) as never };
      case 'error':
        return { type, id: fields.get('id', readCount), error: fields.get('error', readApiErrorPayload) };
      case 'run-text':
        return {
          type, id: fields.get('id', readRequestId), runId: fields.get('runId', readRunId),
          delta: fields.get('delta', readString), tokenIds: fields.get('tokenIds', arrayReader(readCount)),
        };
      case 'run-metrics':
        return { type, id: fields.get('id', readRequestId), runId: fields.get('runId', readRunId), steps: fields.get('steps', arrayReader(readStepMetrics)) };
      case 'run-done':
        return {
          type, id: fields.get('id', readRequestId), runId: fields.get('runId', readRunId),
          result: fields.get('result', readGenerationResult), savedRunId: fields.get('savedRunId', nullableReader(readRunId)),
        };
      case 'run-error':
        return { type, id: fields.get('id', readRequestId), runId: fields.get('runId', readRunId), error: fields.get('error', readRunErrorPayload) };
      case 'command':
        return { type, command: fields.get('command', readWorkbenchCommand) };
      default:
        if (isLabEventType(type)) return readLabApiEvent(fields, type);
        throw new ApiProtocolError(`Unsupported host message type ${describeValue(type)}.`, 0);
    }
  });
}

/** The id of a request that failed to parse, when it has a usable one (so its caller gets the error). */
function salvageId(value: unknown): number {
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  return Number.isSafeInteger(id) && (id as number) >= 1 ? (id as number) : 0;
}

function parseWith<T>(value: unknown, sender: 'page' | 'host', parse: (fields: ObjectFields, type: string) => T): T {
  try {
    const fields = readObject(value, '');
    return parse(fields, fields.get('type', readString));
  } catch (error) {
    if (error instanceof FieldError) throw new ApiProtocolError(`Invalid message from the ${sender}: ${error.message}.`, salvageId(value));
    throw error;
  }
}
