import { KvscopeError } from '../errors.js';
import { jsonSyntaxProblem } from '../json-syntax.js';
import { EXTENSION_IDS, type ActiveExtension } from '../cache/active-extensions.js';
import { arrayReader, choiceReader, FieldError, literalReader, readObject, readString, withOptional, type Read } from '../protocol/field-readers.js';
import { readGenerationResult } from '../protocol/read-generation-result.js';
import { RUN_ID_PATTERN, RUN_RECORD_FORMAT, RUN_RECORD_VERSION, type RunRecord } from './run-record.js';

/** A file that is not a readable run record: truncated, edited by hand, or from another program. */
export class RunRecordError extends KvscopeError {
  override readonly name = 'RunRecordError';
}

/**
 * Reads a run record's text, checking every field (a record on disk is untrusted: a crash, a sync
 * tool or a text editor may have cut or changed it). `sourceName` (a path) starts every message.
 */
export function parseRunRecord(text: string, sourceName: string): RunRecord {
  return readRunRecord(parseDocument(text, sourceName), sourceName);
}

/** The same checks on a record already parsed from JSON (e.g. a WebSocket frame). */
export function readRunRecord(document: unknown, sourceName: string): RunRecord {
  try {
    const fields = readObject(document, '');
    const format = fields.get('format', (value) => value);
    if (format !== RUN_RECORD_FORMAT) {
      // Not the value found: a file that is no record may be anyone's, and messages never quote files.
      throw new RunRecordError(`${sourceName} is not a kvscope run record (its "format" is ${format === undefined ? 'missing' : 'something else'}, expected "${RUN_RECORD_FORMAT}").`);
    }
    const version = fields.get('version', (value) => value);
    if (typeof version === 'number' && version > RUN_RECORD_VERSION) {
      throw new RunRecordError(`${sourceName} is a version ${version} run record; this kvscope reads version ${RUN_RECORD_VERSION}. Update kvscope to open it.`);
    }
    const record: RunRecord = {
      format: RUN_RECORD_FORMAT,
      version: fields.get('version', literalReader(RUN_RECORD_VERSION)),
      id: fields.get('id', (value, path) => {
        const id = readString(value, path);
        if (!RUN_ID_PATTERN.test(id)) throw new FieldError(`${path}: expected letters, digits, ".", "_" or "-", got ${JSON.stringify(id)}`);
        return id;
      }),
      createdAt: fields.get('createdAt', (value, path) => {
        const text = readString(value, path);
        if (Number.isNaN(Date.parse(text))) throw new FieldError(`${path}: expected an ISO 8601 date, got ${JSON.stringify(text)}`);
        return text;
      }),
      kvscopeVersion: fields.get('kvscopeVersion', readString),
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

function parseDocument(text: string, sourceName: string): unknown {
  if (text.trim().length === 0) throw new RunRecordError(`${sourceName} is empty; it is not a run record (an interrupted copy?).`);
  try {
    return JSON.parse(text);
  } catch (error) {
    const cut = /[}\]]\s*$/.test(text) ? '' : ' The file looks cut short (an interrupted write or copy).';
    // Only where it breaks: V8's message quotes the text, which may be another program's file.
    throw new RunRecordError(`${sourceName} is not valid JSON${jsonSyntaxProblem(error, text)}.${cut}`);
  }
}

/** Steps are numbered 0, 1, … in order: a gap means steps were lost or edited out. */
function checkSteps(record: RunRecord): void {
  record.steps.forEach((step, index) => {
    if (step.step !== index) throw new FieldError(`steps[${index}].step: expected ${index} (steps are numbered in order), got ${step.step}`);
  });
}
