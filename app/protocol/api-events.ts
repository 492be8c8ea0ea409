import { runIdSchema } from './api-methods.js';
import type { MessagesOf } from './message-table.js';
import { requestIdSchema, runErrorPayloadSchema } from './messages.js';
import { arraySchema, countSchema, objectSchema, stringSchema } from './protocol-schema.js';
import { generationResultSchema } from './read-generation-result.js';
import { stepMetricsSchema } from './read-step-metrics.js';

/**
 * The declaration of a run's events, host → page (the Lab's sweep events are declared in
 * app/lab/lab-api-events.ts): each event's fields with their schemas, checked by the page on every
 * frame from the serve host (parse-api-message.ts) and typed from here (api-messages.ts ApiRunEvent).
 * Each carries the id of the `start-run` request that began the run, so a client routes it before
 * it even has the ticket; `run-done` or `run-error` is the last. They carry what the worker's
 * messages carried (messages.ts), with the same schemas.
 */

export const RUN_EVENTS = {
  'run-text': objectSchema({ id: requestIdSchema, runId: runIdSchema, delta: stringSchema, tokenIds: arraySchema(countSchema) }),
  'run-metrics': objectSchema({ id: requestIdSchema, runId: runIdSchema, steps: arraySchema(stepMetricsSchema) }),
  'run-done': objectSchema({ id: requestIdSchema, runId: runIdSchema, result: generationResultSchema, savedRunId: runIdSchema.nullable() }),
  'run-error': objectSchema({ id: requestIdSchema, runId: runIdSchema, error: runErrorPayloadSchema }),
} as const;

export type ApiRunEvent = MessagesOf<typeof RUN_EVENTS>;
