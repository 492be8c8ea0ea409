import { z } from 'zod';
import { KvscopeError } from '../errors.js';
import { FieldError, describeValue, integerReader, readObject, readString, type ObjectFields, type Read } from './field-readers.js';
import { declaredMethod } from './api-method-index.js';
import { COMMAND_EVENTS, RUN_EVENTS, workbenchCommandSchema } from './api-events.js';
import { modelSourceSchema, runIdSchema } from './api-methods.js';
import { readDeclaredMessage } from './message-table.js';
import { choiceSchema, countSchema, integerSchema, objectSchema, readWithSchema, schemaReader, stringSchema } from './protocol-schema.js';
import {
  API_ERROR_CODES, type ApiErrorPayload, type ApiHostMessage, type ApiRequest,
} from './api-messages.js';
import type { ModelSource, WorkbenchCommand } from './workbench-api.js';
import { LAB_EVENTS } from '../lab/lab-api-events.js';

/** A message that is not a member of the API protocol, or a member with a malformed field. */
export class ApiProtocolError extends KvscopeError {
  override readonly name = 'ApiProtocolError';
  constructor(message: string, readonly requestId: number) {
    super(message);
  }
}

const readRequestId = integerReader(1);

export const readRunId: Read<string> = schemaReader(runIdSchema);
export const readModelSource: Read<ModelSource> = schemaReader(modelSourceSchema);

export const readWorkbenchCommand: Read<WorkbenchCommand> = schemaReader(workbenchCommandSchema);

const apiErrorPayloadSchema: z.ZodType<ApiErrorPayload> = objectSchema({
  code: choiceSchema(API_ERROR_CODES),
  message: stringSchema,
  fix: stringSchema.optional(),
});

/**
 * Everything a host sends the page: the answer to a request (a `result`, whose value's shape depends
 * on the request it answers and is read by the client, or an `error`; id 0 when the request was too
 * malformed to carry one), and the events declared in api-events.ts and app/lab/lab-api-events.ts.
 */
const HOST_MESSAGES = {
  result: objectSchema({ id: integerSchema(1), value: z.unknown() }),
  error: objectSchema({ id: countSchema, error: apiErrorPayloadSchema }),
  ...RUN_EVENTS,
  ...COMMAND_EVENTS,
  ...LAB_EVENTS,
} as const;

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
 * Checks what a host sent (serve mode: a JSON frame) against its declaration. Events are read in
 * full, which also turns JSON's `"Infinity"` back into numbers (json-numbers.ts); a `result` value is
 * passed on as is, because its shape depends on the request it answers (see the WebSocket client).
 */
export function parseApiHostMessage(value: unknown): ApiHostMessage {
  try {
    return readDeclaredMessage(HOST_MESSAGES, value, '', (type) => new ApiProtocolError(`Unsupported host message type ${describeValue(type)}.`, 0)) as ApiHostMessage;
  } catch (error) {
    if (error instanceof FieldError) throw new ApiProtocolError(`Invalid message from the host: ${error.message}.`, salvageId(value));
    throw error;
  }
}

/** The id of a request that failed to parse, when it has a usable one (so its caller gets the error). */
function salvageId(value: unknown): number {
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  return Number.isSafeInteger(id) && (id as number) >= 1 ? (id as number) : 0;
}

function parseWith<T>(value: unknown, sender: 'page', parse: (fields: ObjectFields, type: string) => T): T {
  try {
    const fields = readObject(value, '');
    return parse(fields, fields.get('type', readString));
  } catch (error) {
    if (error instanceof FieldError) throw new ApiProtocolError(`Invalid message from the ${sender}: ${error.message}.`, salvageId(value));
    throw error;
  }
}
