import type { z } from 'zod';
import { KvscopeError } from '../errors.js';
import {
  FieldError, describeValue, choiceReader, integerReader, readCount, readObject, readString, withOptional,
  type ObjectFields, type Read,
} from './field-readers.js';
import { declaredMethod } from './api-method-index.js';
import { RUN_EVENTS } from './api-events.js';
import { modelSourceSchema, pathSchema, runIdSchema } from './api-methods.js';
import { readWithSchema, schemaReader } from './protocol-schema.js';
import {
  API_ERROR_CODES, type ApiErrorPayload, type ApiHostMessage, type ApiRequest,
} from './api-messages.js';
import type { ModelSource, WorkbenchCommand } from './workbench-api.js';
import { isLabEventType, readLabApiEvent } from '../lab/lab-api-messages.js';

/** A message that is not a member of the API protocol, or a member with a malformed field. */
export class ApiProtocolError extends KvscopeError {
  override readonly name = 'ApiProtocolError';
  constructor(message: string, readonly requestId: number) {
    super(message);
  }
}

const readRequestId = integerReader(1);

export const readRunId: Read<string> = schemaReader(runIdSchema);
const readPath: Read<string> = schemaReader(pathSchema);
export const readModelSource: Read<ModelSource> = schemaReader(modelSourceSchema);

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
 * Checks a request against its declaration (api-methods.ts) and returns a typed copy with only the
 * declared fields. Everything a page sends is untrusted at the host: a stale page, a bug, or (in
 * serve mode) anything that got hold of the socket. Throws ApiProtocolError, carrying the request id
 * when one could be read.
 */
export function parseApiRequest(value: unknown): ApiRequest {
  return parseWith(value, 'page', (fields, type) => {
    const id = fields.get('id', readRequestId);
    const declared = declaredMethod(type);
    if (declared === undefined) throw new ApiProtocolError(`Unsupported request type ${describeValue(type)}.`, id);
    const params = readWithSchema(declared.declaration.params, value, '');
    return { type, id, ...params } as ApiRequest;
  });
}

/**
 * A result as the client reads it: results cross JSON, where kvscope writes non-finite numbers as
 * `"Infinity"` (json-numbers.ts), so one that may hold them is read back through its declared reader
 * (which also checks it); the other results hold finite numbers only and are passed on.
 */
export function readApiResult(type: string, value: unknown): unknown {
  const read = declaredMethod(type)?.declaration.readResult;
  return read === undefined ? value : read(value);
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
      case 'run-metrics':
      case 'run-done':
      case 'run-error':
        return { type, ...readWithSchema(RUN_EVENTS[type] as z.ZodType<object>, value, '') } as ApiHostMessage;
      case 'command':
        return { type, command: fields.get('command', readWorkbenchCommand) };
      default:
        if (isLabEventType(type)) return readLabApiEvent(value, type);
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
