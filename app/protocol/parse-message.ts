import { KvscopeError } from '../errors.js';
import {
  FieldError, arrayReader, choiceReader, integerReader, readCount, readNumber, readObject, readString, withOptional, type ObjectFields, type Read,
} from './field-readers.js';
import { EXECUTION_PROVIDERS } from '../engine/types.js';
import { RUN_ERROR_CODES, type HostMessage, type RunErrorPayload, type WarmTarget, type WorkerMessage } from './messages.js';
import { readDiagnostic } from './read-diagnostic.js';
import { readGenerationResult } from './read-generation-result.js';
import { readRunSettings } from './read-run-settings.js';
import { readStepMetrics } from './read-step-metrics.js';

/** A message that is not a member of the protocol, or a member with a malformed field. */
export class ProtocolError extends KvscopeError {
  override readonly name = 'ProtocolError';
}

const readRequestId = integerReader(1);

/**
 * Checks a message from the worker field by field and returns a typed copy. Everything a worker
 * posts is untrusted at this boundary: a stale build, a bug or a crash mid-post all arrive here.
 */
export function parseWorkerMessage(value: unknown): WorkerMessage {
  return parseWith(value, 'worker', (fields, type) => {
    switch (type) {
      case 'ready':
        return { type, protocolVersion: fields.get('protocolVersion', readCount) };
      case 'metrics':
        return { type, id: fields.get('id', readRequestId), steps: fields.get('steps', arrayReader(readStepMetrics)) };
      case 'text':
        return {
          type, id: fields.get('id', readRequestId), delta: fields.get('delta', readString), tokenIds: fields.get('tokenIds', arrayReader(readCount)),
        };
      case 'done':
        return { type, id: fields.get('id', readRequestId), result: fields.get('result', readGenerationResult) };
      case 'warmed':
        return { type, id: fields.get('id', readRequestId), loadMs: fields.get('loadMs', readNumber) };
      case 'error':
        // id 0 (NO_REQUEST): the worker could not tell which request a failure belongs to.
        return { type, id: fields.get('id', readCount), error: fields.get('error', readRunErrorPayload) };
      default:
        throw new ProtocolError(`Unsupported worker message type ${JSON.stringify(type)}.`);
    }
  });
}

/** Checks a message from a host; the worker and, later, the serve host receive these. */
export function parseHostMessage(value: unknown): HostMessage {
  return parseWith(value, 'host', (fields, type) => {
    switch (type) {
      case 'start':
        return { type, id: fields.get('id', readRequestId), settings: fields.get('settings', readRunSettings) };
      case 'cancel':
        return { type, id: fields.get('id', readRequestId) };
      case 'warm':
        return { type, id: fields.get('id', readRequestId), target: fields.get('target', readWarmTarget) };
      default:
        throw new ProtocolError(`Unsupported host message type ${JSON.stringify(type)}.`);
    }
  });
}

const readWarmTarget: Read<WarmTarget> = (value, path) => {
  const fields = readObject(value, path);
  return {
    model: fields.get('model', readString),
    ...withOptional('onnxFile', fields.optional('onnxFile', readString)),
    executionProvider: fields.get('executionProvider', choiceReader(EXECUTION_PROVIDERS)),
  };
};

export const readRunErrorPayload: Read<RunErrorPayload> = (value, path) => {
  const fields = readObject(value, path);
  return {
    code: fields.get('code', choiceReader(RUN_ERROR_CODES)),
    message: fields.get('message', readString),
    ...withOptional('fix', fields.optional('fix', readString)),
    ...withOptional('diagnostics', fields.optional('diagnostics', arrayReader(readDiagnostic))),
  };
};

function parseWith<T>(value: unknown, sender: 'worker' | 'host', parse: (fields: ObjectFields, type: string) => T): T {
  try {
    const fields = readObject(value, '');
    return parse(fields, fields.get('type', readString));
  } catch (error) {
    if (error instanceof FieldError) throw new ProtocolError(`Invalid message from the ${sender}: ${error.message}.`);
    throw error;
  }
}
