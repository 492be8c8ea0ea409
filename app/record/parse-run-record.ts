import { EXTENSION_IDS, type ActiveExtension } from '../cache/active-extensions.js';
import { arrayReader, choiceReader, FieldError, readObject, readString, withOptional, type Read } from '../protocol/field-readers.js';
import { readGenerationResult } from '../protocol/read-generation-result.js';
import { parseRecordDocument } from './record-document.js';
import { readRecordHeader, RecordError, type MakeRecordError } from './record-header.js';
import type { RunRecord, RunRecordHeader } from './run-record.js';

/** A file that is not a readable run record: truncated, edited by hand, or from another program. */
export class RunRecordError extends RecordError {
  override readonly name = 'RunRecordError';
}

const fail: MakeRecordError = (message) => new RunRecordError(message);

/**
 * Reads a run record's text, checking every field (a record on disk is untrusted: a crash, a sync
 * tool or a text editor may have cut or changed it). `sourceName` (a path) starts every message.
 */
export function parseRunRecord(text: string, sourceName: string): RunRecord {
  return readRunRecord(parseRecordDocument('run', text, sourceName, fail), sourceName);
}

/** The same checks on a record already parsed from JSON (e.g. a WebSocket frame). */
export function readRunRecord(document: unknown, sourceName: string): RunRecord {
  try {
    const fields = readObject(document, '');
    const record: RunRecord = {
      ...(readRecordHeader('run', document, sourceName, fail) as RunRecordHeader),
      ...readGenerationResult(document, ''),
      ...withOptional('extensions', fields.optional('extensions', arrayReader(readActiveExtension))),
    };
    checkSteps(record);
    return record;
  } catch (error) {
    if (error instanceof FieldError) throw new RunRecordError(`${sourceName} is not a valid run record: ${error.message}.`);
    throw error;
  }
}

const readActiveExtension: Read<ActiveExtension> = (value, path) => {
  const fields = readObject(value, path);
  return { id: fields.get('id', choiceReader(EXTENSION_IDS)), label: fields.get('label', readString), detail: fields.get('detail', readString) };
};

/** Steps are numbered 0, 1, … in order: a gap means steps were lost or edited out. */
function checkSteps(record: RunRecord): void {
  record.steps.forEach((step, index) => {
    if (step.step !== index) throw new FieldError(`steps[${index}].step: expected ${index} (steps are numbered in order), got ${step.step}`);
  });
}
