import type { z } from 'zod';
import { readObject, readString } from './field-readers.js';
import { readWithSchema } from './protocol-schema.js';

/**
 * How a family of messages is declared (the worker protocols in messages.ts and
 * app/lab/lab-protocol.ts, the events a host sends the page in api-events.ts and
 * app/lab/lab-api-events.ts): a table from each message's `type` to the schema of its other fields.
 * The message union and the reader of a received message follow from the table, so adding a
 * message is one entry there and the code that sends and handles it.
 */
export type MessageTable = Readonly<Record<string, z.ZodObject>>;

/** Fields as they are read: arrays too are not written to. */
type ReadonlyFields<T> = { readonly [K in keyof T]: T[K] extends (infer E)[] ? readonly E[] : T[K] };

/** Every message of a table as it travels: its `type` and its fields (the discriminated union). */
export type MessagesOf<T extends MessageTable> = {
  [K in keyof T & string]: { readonly type: K } & ReadonlyFields<z.output<T[K]>>;
}[keyof T & string];

/** The message of `type` K. */
export type MessageOf<T extends MessageTable, K extends keyof T & string> = Extract<MessagesOf<T>, { readonly type: K }>;

/** Whether `type` is declared in `table` (own entries only: "toString" is no message). */
export function isDeclaredType<T extends MessageTable>(table: T, type: string): type is keyof T & string {
  return Object.prototype.hasOwnProperty.call(table, type);
}

/**
 * Reads a received message against its declaration and returns a typed copy holding only the declared
 * fields. Throws the readers' FieldError (`path: expected …, got …`, the first problem in declaration
 * order) for a malformed message, and `unsupported(type)` for a type the table does not declare.
 */
export function readDeclaredMessage<T extends MessageTable>(table: T, value: unknown, path: string, unsupported: (type: string) => Error): MessagesOf<T> {
  const type = readObject(value, path).get('type', readString);
  if (!isDeclaredType(table, type)) throw unsupported(type);
  return { type, ...readWithSchema(table[type] as z.ZodType<object>, value, path) } as MessagesOf<T>;
}
