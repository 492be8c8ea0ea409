import { stringifyJson } from '../protocol/json-numbers.js';
import { literalReader, readObject, readString, type Read } from '../protocol/field-readers.js';
import type { EvalResult } from './eval-result.js';
import { readEvalResult } from './read-eval.js';

/**
 * A saved evaluation (`kvscope eval --out eval.json`, and every sweep point's eval.json): the whole
 * EvalResult under a header that says what the file is. docs/eval-record.md documents every field.
 */
export const EVAL_RECORD_FORMAT = 'kvscope-eval-record';

/** Bumped when a field changes meaning or a required field is added; readers refuse other versions. */
export const EVAL_RECORD_VERSION = 1;

export interface EvalRecordHeader {
  readonly format: typeof EVAL_RECORD_FORMAT;
  readonly version: typeof EVAL_RECORD_VERSION;
  /** when the evaluation finished, ISO 8601 in UTC */
  readonly createdAt: string;
  readonly kvscopeVersion: string;
}

export type EvalRecord = EvalRecordHeader & EvalResult;

export function createEvalRecord(result: EvalResult, header: { createdAt: Date; kvscopeVersion: string }): EvalRecord {
  return { format: EVAL_RECORD_FORMAT, version: EVAL_RECORD_VERSION, createdAt: header.createdAt.toISOString(), kvscopeVersion: header.kvscopeVersion, ...result };
}

/** Indented JSON, non-finite numbers as `"Infinity"` (json-numbers.ts). */
export function serializeEvalRecord(record: EvalRecord): string {
  return stringifyJson(record, 1) + '\n';
}

export const readEvalRecord: Read<EvalRecord> = (value, path) => {
  const fields = readObject(value, path);
  return {
    format: fields.get('format', literalReader(EVAL_RECORD_FORMAT)),
    version: fields.get('version', literalReader(EVAL_RECORD_VERSION)),
    createdAt: fields.get('createdAt', readString),
    kvscopeVersion: fields.get('kvscopeVersion', readString),
    ...readEvalResult(value, path),
  };
};

/** Parses an eval.json's text; throws FieldError (or SyntaxError) naming what is wrong. */
export function parseEvalRecord(text: string): EvalRecord {
  return readEvalRecord(JSON.parse(text) as unknown, '');
}
