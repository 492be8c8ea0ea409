import { KvscopeError } from '../errors.js';
import { FieldError, type Read } from './field-readers.js';
import { readDeclaredMessage, type MessageTable, type MessagesOf } from './message-table.js';
import { HOST_MESSAGES, WORKER_MESSAGES, runErrorPayloadSchema, type HostMessage, type RunErrorPayload, type WorkerMessage } from './messages.js';
import { schemaReader } from './protocol-schema.js';

/** A message that is not a member of the protocol, or a member with a malformed field. */
export class ProtocolError extends KvscopeError {
  override readonly name = 'ProtocolError';
}

/**
 * Checks a message from the worker against its declaration (messages.ts) and returns a typed copy.
 * Everything a worker posts is untrusted at this boundary: a stale build, a bug or a crash mid-post
 * all arrive here.
 */
export function parseWorkerMessage(value: unknown): WorkerMessage {
  return parseWith(WORKER_MESSAGES, value, 'worker');
}

/** Checks a message from a host; the worker receives these. */
export function parseHostMessage(value: unknown): HostMessage {
  return parseWith(HOST_MESSAGES, value, 'host');
}

export const readRunErrorPayload: Read<RunErrorPayload> = schemaReader(runErrorPayloadSchema);

function parseWith<T extends MessageTable>(table: T, value: unknown, sender: 'worker' | 'host'): MessagesOf<T> {
  try {
    return readDeclaredMessage(table, value, '', (type) => new ProtocolError(`Unsupported ${sender} message type ${JSON.stringify(type)}.`));
  } catch (error) {
    if (error instanceof FieldError) throw new ProtocolError(`Invalid message from the ${sender}: ${error.message}.`);
    throw error;
  }
}
