import type { z } from 'zod';
import type { GenerationResult } from '../engine/generation-result.js';
import type { StepMetrics } from '../engine/types.js';
import { runIdSchema } from './api-methods.js';
import { arrayReader } from './field-readers.js';
import type { RunErrorPayload } from './messages.js';
import { readRunErrorPayload } from './parse-message.js';
import { arraySchema, integerSchema, objectSchema, readerSchema, stringSchema } from './protocol-schema.js';
import { readGenerationResult } from './read-generation-result.js';
import { readStepMetrics } from './read-step-metrics.js';

/**
 * The declaration of a run's events, host → page (the Lab's sweep events are declared in
 * app/lab/lab-api-methods.ts): each event's fields with their schemas, checked by the page on every
 * frame from the serve host (parse-api-message.ts) and typed from here (api-messages.ts ApiRunEvent).
 * Each carries the id of the `start-run` request that began the run, so a client routes it before
 * it even has the ticket; `run-done` or `run-error` is the last.
 */

export const requestIdSchema = integerSchema(1);

/** Step metrics and results hold non-finite numbers (`"Infinity"` in JSON): their readers turn them back. */
export const RUN_EVENTS = {
  'run-text': objectSchema({ id: requestIdSchema, runId: runIdSchema, delta: stringSchema, tokenIds: arraySchema(integerSchema(0)) }),
  'run-metrics': objectSchema({ id: requestIdSchema, runId: runIdSchema, steps: readerSchema<StepMetrics[]>(arrayReader(readStepMetrics)) }),
  'run-done': objectSchema({
    id: requestIdSchema, runId: runIdSchema, result: readerSchema<GenerationResult>(readGenerationResult), savedRunId: runIdSchema.nullable(),
  }),
  'run-error': objectSchema({ id: requestIdSchema, runId: runIdSchema, error: readerSchema<RunErrorPayload>(readRunErrorPayload) }),
} as const;

/** Fields as they are read: arrays too are not written to. */
type ReadonlyFields<T> = { readonly [K in keyof T]: T[K] extends (infer E)[] ? readonly E[] : T[K] };

/** One declared event as it travels: its `type` and its fields. */
export type EventsOf<T extends Readonly<Record<string, z.ZodType>>> = {
  [K in keyof T & string]: { readonly type: K } & ReadonlyFields<z.output<T[K]>>;
}[keyof T & string];
