import { readDeclaredMessage, type MessageTable, type MessagesOf } from '../protocol/message-table.js';
import { ProtocolError } from '../protocol/parse-message.js';
import { LAB_HOST_MESSAGES, LAB_WORKER_MESSAGES, type LabHostMessage, type LabWorkerMessage } from './lab-protocol.js';

/** A message from a lab worker, checked against its declaration (lab-protocol.ts): a stale build or a bug arrives here. */
export function parseLabWorkerMessage(value: unknown): LabWorkerMessage {
  return parseWith(LAB_WORKER_MESSAGES, value, 'lab worker');
}

/** A message from a lab host. */
export function parseLabHostMessage(value: unknown): LabHostMessage {
  return parseWith(LAB_HOST_MESSAGES, value, 'lab host');
}

function parseWith<T extends MessageTable>(table: T, value: unknown, from: string): MessagesOf<T> {
  try {
    return readDeclaredMessage(table, value, 'message', (type) => new ProtocolError(`Unsupported ${from} message type ${JSON.stringify(type)}.`));
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError(`A malformed message from the ${from}: ${(error as Error).message}`);
  }
}
