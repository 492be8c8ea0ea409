import { KvscopeError } from '../errors.js';
import { FieldError, literalReader, readObject, readString } from '../protocol/field-readers.js';

/**
 * The header every kvscope record starts with (a run's, an evaluation's): what the file is, which
 * version of its layout, when it was written and by which kvscope. One type, one writer and one
 * reader for both kinds, so a record of either kind says the same things about itself and is
 * refused in the same words when it is not one (docs/run-record.md, docs/eval-record.md).
 */
export const RECORD_KINDS = {
  /** a saved run; its id is its file name in the run store */
  run: { format: 'kvscope-run-record', version: 1, noun: 'run record', article: 'a', hasId: true },
  /** `kvscope eval --out`, and every sweep point's eval.json */
  eval: { format: 'kvscope-eval-record', version: 1, noun: 'eval record', article: 'an', hasId: false },
} as const;

export type RecordKind = keyof typeof RECORD_KINDS;

export interface RecordHeader<K extends RecordKind> {
  readonly format: (typeof RECORD_KINDS)[K]['format'];
  /**
   * Bumped when a field changes meaning or a required field is added; readers refuse newer versions
   * rather than misread them. Version 1 of both: the header and the result as of kvscope 0.1.
   */
  readonly version: (typeof RECORD_KINDS)[K]['version'];
  /** runs only: the store's file name without `.json`, letters, digits, `.`, `_` and `-` */
  readonly id?: string;
  /** when the run or evaluation finished, ISO 8601 in UTC (`2025-01-31T12:00:00.000Z`) */
  readonly createdAt: string;
  /** the kvscope that wrote the record */
  readonly kvscopeVersion: string;
}

/** Ids double as file names, so they may not name another folder. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A file that is not a readable record: another program's, a newer layout's, cut short or edited. */
export class RecordError extends KvscopeError {
  override readonly name: string = 'RecordError';
}

/** How a reader makes its error (a run record's is a RunRecordError, which the run store tells apart). */
export type MakeRecordError = (message: string) => RecordError;

export const makeRecordError: MakeRecordError = (message) => new RecordError(message);

/** The header of a new record, fields in the order the file shows them. */
export function recordHeader<K extends RecordKind>(kind: K, header: { id?: string; createdAt: Date; kvscopeVersion: string }): RecordHeader<K> {
  const { format, version } = RECORD_KINDS[kind];
  return {
    format, version,
    ...(RECORD_KINDS[kind].hasId && header.id !== undefined ? { id: header.id } : {}),
    createdAt: header.createdAt.toISOString(),
    kvscopeVersion: header.kvscopeVersion,
  } as RecordHeader<K>;
}

/**
 * Reads and checks a record's header (`document` parsed from JSON, untrusted). Another program's
 * file or a newer version is refused by name (`sourceName`) with `fail`'s error; a bad field throws a
 * FieldError, which the record's reader words for its kind.
 */
export function readRecordHeader<K extends RecordKind>(kind: K, document: unknown, sourceName: string, fail: MakeRecordError = makeRecordError): RecordHeader<K> {
  const { format: expected, version: readable, noun, hasId } = RECORD_KINDS[kind];
  const fields = readObject(document, '');
  const format = fields.get('format', (value) => value);
  if (format !== expected) {
    // Not the value found: a file that is no record may be anyone's, and messages never quote files.
    throw fail(`${sourceName} is not a kvscope ${noun} (its "format" is ${format === undefined ? 'missing' : 'something else'}, expected "${expected}").`);
  }
  const version = fields.get('version', (value) => value);
  if (typeof version === 'number' && version > readable) {
    throw fail(`${sourceName} is a version ${version} ${noun}; this kvscope reads version ${readable}. Update kvscope to open it.`);
  }
  return {
    format: expected,
    version: fields.get('version', literalReader(readable)),
    ...(hasId ? { id: fields.get('id', readRunId) } : {}),
    createdAt: fields.get('createdAt', (value, path) => {
      const text = readString(value, path);
      if (Number.isNaN(Date.parse(text))) throw new FieldError(`${path}: expected an ISO 8601 date, got ${JSON.stringify(text)}`);
      return text;
    }),
    kvscopeVersion: fields.get('kvscopeVersion', readString),
  } as RecordHeader<K>;
}

function readRunId(value: unknown, path: string): string {
  const id = readString(value, path);
  if (!RUN_ID_PATTERN.test(id)) throw new FieldError(`${path}: expected letters, digits, ".", "_" or "-", got ${JSON.stringify(id)}`);
  return id;
}
