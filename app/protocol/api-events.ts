import { z } from 'zod';
import { modelSourceSchema, pathSchema, runIdSchema } from './api-methods.js';
import type { MessageOf, MessagesOf } from './message-table.js';
import { requestIdSchema, runErrorPayloadSchema } from './messages.js';
import { arraySchema, choiceSchema, countSchema, isPlainObject, objectSchema, stringSchema } from './protocol-schema.js';
import { generationResultSchema } from './read-generation-result.js';
import { stepMetricsSchema } from './read-step-metrics.js';
import type { WorkbenchCommand } from './workbench-api.js';

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

const COMMAND_TYPES = ['open-model', 'open-recent', 'model-dropped', 'run', 'stop', 'export'] as const;

/** An application menu command or a dropped folder (Electron), as the page receives it. */
export const workbenchCommandSchema: z.ZodType<WorkbenchCommand> = z.discriminatedUnion('type', [
  objectSchema({ type: z.enum(['open-model', 'run', 'stop']) }),
  objectSchema({ type: z.literal('open-recent'), source: modelSourceSchema }),
  objectSchema({ type: z.literal('model-dropped'), path: pathSchema }),
  objectSchema({ type: z.literal('export'), format: choiceSchema(['json', 'csv']) }),
], { error: (issue) => (isPlainObject(issue.input) ? `one of ${COMMAND_TYPES.join(', ')}` : 'an object') });

/** The host's events that belong to no request. */
export const COMMAND_EVENTS = {
  command: objectSchema({ command: workbenchCommandSchema }),
} as const;

export type ApiCommandEvent = MessageOf<typeof COMMAND_EVENTS, 'command'>;
