import {
  choiceReader, integerReader, readBoolean, readCount, readNumber, readObject, readString, withOptional, type ObjectFields, type Read,
} from '../protocol/field-readers.js';
import { ProtocolError, readRunErrorPayload } from '../protocol/parse-message.js';
import type { EvalProgress } from './evaluate.js';
import type { LabHostMessage, LabJobOptions, LabWorkerMessage } from './lab-protocol.js';
import { readEvalResult, readEvalSettings } from './read-eval.js';

const readJobId = integerReader(1);

const readJobOptions: Read<LabJobOptions> = (value, path) => {
  const fields = readObject(value, path);
  return {
    ...withOptional('intraOpNumThreads', fields.optional('intraOpNumThreads', integerReader(1))),
    ...withOptional('sweepJobs', fields.optional('sweepJobs', integerReader(1))),
    ...withOptional('perToken', fields.optional('perToken', readBoolean)),
  };
};

const readProgress: Read<EvalProgress> = (value, path) => {
  const fields = readObject(value, path);
  return { phase: fields.get('phase', choiceReader(['reference', 'eval'] as const)), windowsDone: fields.get('windowsDone', readCount), windows: fields.get('windows', readCount) };
};

/** A message from a lab worker, checked field by field (a stale build or a bug arrives here). */
export function parseLabWorkerMessage(value: unknown): LabWorkerMessage {
  return parseWith(value, 'lab worker', (fields, type) => {
    switch (type) {
      case 'ready': return { type, protocolVersion: fields.get('protocolVersion', readCount) };
      case 'progress': return { type, id: fields.get('id', readJobId), progress: fields.get('progress', readProgress) };
      case 'evaluated': return { type, id: fields.get('id', readJobId), result: fields.get('result', readEvalResult) };
      case 'referenced': {
        const reference = readObject(fields.get('reference', (v) => v), 'reference');
        return { type, id: fields.get('id', readJobId), reference: {
          key: reference.get('key', readString), cached: reference.get('cached', readBoolean), ms: reference.get('ms', readNumber),
          ...withOptional('windowsComputed', reference.optional('windowsComputed', readCount)),
          ...withOptional('bytes', reference.optional('bytes', readCount)),
        } };
      }
      case 'error': return { type, id: fields.get('id', readCount), error: fields.get('error', readRunErrorPayload) };
      default: throw new ProtocolError(`Unsupported lab worker message type ${JSON.stringify(type)}.`);
    }
  });
}

/** A message from a lab host. */
export function parseLabHostMessage(value: unknown): LabHostMessage {
  return parseWith(value, 'lab host', (fields, type) => {
    switch (type) {
      case 'evaluate':
      case 'reference':
        return { type, id: fields.get('id', readJobId), settings: fields.get('settings', readEvalSettings), options: fields.get('options', readJobOptions) };
      case 'cancel': return { type, id: fields.get('id', readJobId) };
      default: throw new ProtocolError(`Unsupported lab host message type ${JSON.stringify(type)}.`);
    }
  });
}

function parseWith<T>(value: unknown, from: string, read: (fields: ObjectFields, type: string) => T): T {
  try {
    const fields = readObject(value, 'message');
    return read(fields, fields.get('type', readString));
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError(`A malformed message from the ${from}: ${(error as Error).message}`);
  }
}
