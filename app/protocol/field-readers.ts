import { KvscopeError } from '../errors.js';
import { decodeJsonNumber } from './json-numbers.js';

/**
 * Readers for data that arrives from outside the type system: a worker message, a run record file,
 * later a WebSocket frame. Each reader checks one value and returns it typed, or throws a
 * `FieldError` naming the path, what was expected and what was found. Objects are rebuilt field by
 * field, so unknown fields never travel further than the boundary.
 */
export class FieldError extends KvscopeError {
  override readonly name = 'FieldError';
  /**
   * `at`: the path as the reader was given it ('' at the value itself); `detail`: `expected …, got …`.
   * Kept apart so that a reader nested in a declared schema (protocol-schema.ts) can be re-rooted.
   */
  constructor(message: string, readonly at = '', readonly detail = message) {
    super(message);
  }
}

/** Reads one value found at `path` (e.g. `steps[3].timings.modelMs`). */
export type Read<T> = (value: unknown, path: string) => T;

export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  if (typeof value !== 'string') return `a ${typeof value}`;
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…"` : text;
}

/** Throws the FieldError every reader throws: `path: expected …, got …`. */
export function rejectField(path: string, expected: string, value: unknown): never {
  const detail = `expected ${expected}, got ${describeValue(value)}`;
  throw new FieldError(`${path === '' ? 'the value' : path}: ${detail}`, path, detail);
}

export const readString: Read<string> = (value, path) => (typeof value === 'string' ? value : rejectField(path, 'a string', value));

export const readBoolean: Read<boolean> = (value, path) => (typeof value === 'boolean' ? value : rejectField(path, 'true or false', value));

/** Any number, non-finite ones included (they arrive as `"Infinity"` etc. from JSON; see json-numbers.ts). */
export const readNumber: Read<number> = (value, path) => decodeJsonNumber(value) ?? rejectField(path, 'a number', value);

export const readFiniteNumber: Read<number> = (value, path) =>
  typeof value === 'number' && Number.isFinite(value) ? value : rejectField(path, 'a finite number', value);

export function integerReader(min: number): Read<number> {
  return (value, path) => (Number.isSafeInteger(value) && (value as number) >= min ? (value as number) : rejectField(path, `an integer ≥ ${min}`, value));
}

/** Counts, sizes, indices and ids. */
export const readCount = integerReader(0);

export function choiceReader<T extends string>(choices: readonly T[]): Read<T> {
  return (value, path) =>
    typeof value === 'string' && (choices as readonly string[]).includes(value) ? (value as T) : rejectField(path, `one of ${choices.join(', ')}`, value);
}

export function literalReader<T extends string | number>(literal: T): Read<T> {
  return (value, path) => (value === literal ? literal : rejectField(path, JSON.stringify(literal), value));
}

export function arrayReader<T>(item: Read<T>): Read<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) rejectField(path, 'an array', value);
    return value.map((element, index) => item(element, `${path}[${index}]`));
  };
}

export function nullableReader<T>(read: Read<T>): Read<T | null> {
  return (value, path) => (value === null ? null : read(value, path));
}

/** Typed access to the fields of one object; `fields.get('x', readNumber)` reads `path.x`. */
export interface ObjectFields {
  get<T>(key: string, read: Read<T>): T;
  /** `undefined` when the field is absent (or explicitly undefined); otherwise read as usual */
  optional<T>(key: string, read: Read<T>): T | undefined;
}

export function readObject(value: unknown, path: string): ObjectFields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) rejectField(path, 'an object', value);
  const record = value as Readonly<Record<string, unknown>>;
  // Own properties only: a field inherited from Object.prototype ("constructor") is not data.
  const own = (key: string): unknown => (Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined);
  return {
    get: (key, read) => read(own(key), path === '' ? key : `${path}.${key}`),
    optional: (key, read) => {
      const field = own(key);
      return field === undefined ? undefined : read(field, path === '' ? key : `${path}.${key}`);
    },
  };
}

/** `{ ...(value !== undefined ? { key: value } : {}) }` for optional fields, without writing `key: undefined`. */
export function withOptional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
