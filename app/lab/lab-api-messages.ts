import type { RequestsOf, ResultsOf } from '../protocol/api-declaration.js';
import type { Read } from '../protocol/field-readers.js';
import { isDeclaredType } from '../protocol/message-table.js';
import { schemaReader } from '../protocol/protocol-schema.js';
import { LAB_EVENTS, sweepResultsSchema, type LabApiEvent } from './lab-api-events.js';
import type { LAB_METHODS } from './lab-api-methods.js';
import type { SweepResults } from './sweep-results.js';

/**
 * The Lab's part of the workbench API transport (app/protocol/api-messages.ts includes these in its
 * unions): requests and results (declared in lab-api-methods.ts), and a sweep's events (declared in
 * lab-api-events.ts), tagged with the id of the `lab-start-sweep` request that began it.
 */

/** The Lab's requests and their results, from the declaration (lab-api-methods.ts). */
export type LabApiRequest = RequestsOf<typeof LAB_METHODS>;

export type LabApiResults = ResultsOf<typeof LAB_METHODS>;

/** A sweep's events, declared in lab-api-events.ts. */
export type { LabApiEvent };

export function isLabEventType(type: string): type is LabApiEvent['type'] {
  return isDeclaredType(LAB_EVENTS, type);
}

/** results.json as the page reads it (a loaded sweep's view). */
export const readSweepResults: Read<SweepResults> = schemaReader(sweepResultsSchema);
