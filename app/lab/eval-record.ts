import { stringifyJson } from '../protocol/json-numbers.js';
import { FieldError } from '../protocol/field-readers.js';
import { parseRecordDocument } from '../record/record-document.js';
import { makeRecordError, readRecordHeader, RECORD_KINDS, recordHeader, type RecordHeader } from '../record/record-header.js';
import type { EvalResult } from './eval-result.js';
import { readEvalResult } from './read-eval.js';

/**
 * A saved evaluation (`kvscope eval --out eval.json`, and every sweep point's eval.json): the whole
 * EvalResult under the header every record has (record-header.ts). docs/eval-record.md documents
 * every field.
 */
export const EVAL_RECORD_FORMAT = RECORD_KINDS.eval.format;
export const EVAL_RECORD_VERSION = RECORD_KINDS.eval.version;

export type EvalRecordHeader = RecordHeader<'eval'>;

export type EvalRecord = EvalRecordHeader & EvalResult;

export function createEvalRecord(result: EvalResult, header: { createdAt: Date; kvscopeVersion: string }): EvalRecord {
  return { ...recordHeader('eval', header), ...result };
}

/** Indented JSON, non-finite numbers as `"Infinity"` (json-numbers.ts). */
export function serializeEvalRecord(record: EvalRecord): string {
  return stringifyJson(record, 1) + '\n';
}

/**
 * Reads an eval record already parsed from JSON (a file, the point the server sent), checking every
 * field; `sourceName` starts every message, as a run record's.
 */
export function readEvalRecord(document: unknown, sourceName: string): EvalRecord {
  try {
    return { ...readRecordHeader('eval', document, sourceName), ...readEvalResult(document, '') };
  } catch (error) {
    if (error instanceof FieldError) throw makeRecordError(`${sourceName} is not a valid eval record: ${error.message}.`);
    throw error;
  }
}

/** Parses an eval.json's text (`sourceName`: its path, for messages); throws a RecordError naming what is wrong. */
export function parseEvalRecord(text: string, sourceName = 'eval.json'): EvalRecord {
  return readEvalRecord(parseRecordDocument('eval', text, sourceName), sourceName);
}
