import { z } from 'zod';
import { FieldError, describeValue, type Read } from './field-readers.js';
import { decodeJsonNumber } from './json-numbers.js';

/**
 * The schema vocabulary of the API declaration (api-methods.ts), on zod: each schema's error is the
 * user words of what was expected ("an integer ≥ 1", "one of json, csv, raw"), and `readWithSchema`
 * turns zod's first issue into the message the hand-written readers throw (field-readers.ts):
 * `settings.sampling.seed: expected an integer ≥ -9007199254740991, got "x"`. So a message a person
 * reads, and every test that asserts one, does not depend on which side of the line a field is on.
 *
 * zod was chosen over valibot because it is the most used TypeScript schema library (types inferred
 * with z.output, per-schema error text, a stable v4), and over a generator of our own because the
 * declaration stays plain TypeScript that any engineer can read.
 */

/** Every message is `expected …`: the schema's own words for what it takes. */
const words = (expected: string) => ({ error: () => expected });

export const stringSchema = z.string(words('a string'));
export const booleanSchema = z.boolean(words('true or false'));
/** zod's numbers are finite: Infinity and NaN are refused. */
export const finiteNumberSchema = z.number(words('a finite number'));

/**
 * Any number, non-finite ones included: they arrive as numbers through structured clone and as
 * `"Infinity"` etc. through JSON (json-numbers.ts), and are numbers again after reading. (zod's own
 * z.number() refuses Infinity, which an exact reconstruction's SNR is.)
 */
export const numberSchema: z.ZodType<number> = z
  .custom<number>((value) => decodeJsonNumber(value) !== undefined, words('a number'))
  .transform((value) => decodeJsonNumber(value)!) as unknown as z.ZodType<number>;

/** Counts, sizes, indices and ids (readCount's schema). */
export const countSchema = integerSchema(0);

export function integerSchema(min: number): z.ZodType<number> {
  return z.int(words(`an integer ≥ ${min}`)).min(min, words(`an integer ≥ ${min}`));
}

export function choiceSchema<const T extends string>(choices: readonly T[]): z.ZodType<T> {
  return z.enum(choices as unknown as [T, ...T[]], words(`one of ${choices.join(', ')}`)) as unknown as z.ZodType<T>;
}

/** One exact value (a format tag, a version), described as JSON writes it. */
export function literalSchema<const T extends string | number>(literal: T): z.ZodType<T> {
  return z.literal(literal, words(JSON.stringify(literal)));
}

export function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string that must also pass `test`, described as `expected` when it does not. */
export function patternSchema(expected: string, test: (text: string) => boolean): z.ZodType<string> {
  return stringSchema.refine(test, words(expected));
}

export function arraySchema<T extends z.ZodType>(item: T): z.ZodArray<T> {
  return z.array(item, words('an array'));
}

export function objectSchema<S extends z.ZodRawShape>(shape: S): z.ZodObject<S> {
  return z.object(shape, words('an object'));
}

/**
 * A hand-written reader (field-readers.ts) as a schema, for values still read by hand (a run's
 * result, its metrics): one definition of their shape, with the reader's own messages, re-rooted at
 * the field that holds them.
 */
export function readerSchema<T>(read: Read<T>): z.ZodType<T> {
  return z.unknown().transform((value, context) => {
    try {
      return read(value, '');
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      context.addIssue({ code: 'custom', message: error.detail, input: value, params: { at: error.at } });
      return z.NEVER;
    }
  }) as unknown as z.ZodType<T>;
}

/**
 * Reads `value` at `path` with `schema`, or throws the FieldError a reader would throw for the first
 * problem (the declaration lists fields in the order they are checked).
 */
export function readWithSchema<T>(schema: z.ZodType<T>, value: unknown, path: string): T {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const at = joinPath(path, issue.path);
  const nested = (issue as { params?: { at?: unknown } }).params?.at;
  if (typeof nested === 'string') {
    const full = nested === '' ? at : nested.startsWith('[') || at === '' ? `${at}${nested}` : `${at}.${nested}`;
    throw new FieldError(`${full === '' ? 'the value' : full}: ${issue.message}`, full, issue.message);
  }
  const detail = `expected ${issue.message}, got ${describeValue(offendingValue(issue))}`;
  throw new FieldError(`${at === '' ? 'the value' : at}: ${detail}`, at, detail);
}

/** A schema as a reader, so declared values plug into the readers' world (records, host messages). */
export function schemaReader<T>(schema: z.ZodType<T>): Read<T> {
  return (value, path) => readWithSchema(schema, value, path);
}

/** zod reports an unknown discriminator with the object as input; a person wants the value itself. */
function offendingValue(issue: z.core.$ZodIssue): unknown {
  const input = (issue as { input?: unknown }).input;
  const key = issue.path[issue.path.length - 1];
  if (issue.code === 'invalid_union' && isPlainObject(input) && key !== undefined) {
    return Object.prototype.hasOwnProperty.call(input, key) ? (input as Record<PropertyKey, unknown>)[key] : undefined;
  }
  return input;
}

function joinPath(root: string, segments: readonly PropertyKey[]): string {
  let path = root;
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else path = path === '' ? String(segment) : `${path}.${String(segment)}`;
  }
  return path;
}
