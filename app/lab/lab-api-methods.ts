import { z } from 'zod';
import { method, returns } from '../protocol/api-declaration.js';
import { readObject } from '../protocol/field-readers.js';
import { choiceSchema, integerSchema, isPlainObject, objectSchema, patternSchema, stringSchema } from '../protocol/protocol-schema.js';
import type { RunExport } from '../protocol/workbench-api.js';
import { readEvalRecord, type EvalRecord } from './eval-record.js';
import {
  POINT_NAME_PATTERN, SWEEP_ID_PATTERN, type LabSweepRequest, type LabSweepSummary, type LabSweepTicket, type LabSweepView,
} from './lab-api.js';
import { readSweepResults } from './lab-api-messages.js';
import type { SweepSpec } from './sweep-spec.js';

/**
 * The declaration of the Lab's API methods (WorkbenchApi's `lab`), as app/protocol/api-methods.ts
 * declares the rest: LabApi, the preload's `lab…` functions, both clients and the host's dispatch
 * follow from this list.
 */

export const sweepIdSchema = patternSchema('a sweep id (letters, digits, ".", "_" and "-")', (id) => SWEEP_ID_PATTERN.test(id));
const pointNameSchema = patternSchema('a point name', (name) => POINT_NAME_PATTERN.test(name));
const jobsSchema = integerSchema(1);

/**
 * A new sweep's spec is read as a JSON object here; the host checks it against eval's options
 * (checkSweepSpec) before anything runs, as it checks a spec file.
 */
const sweepSpecSchema = z.custom<SweepSpec>(
  (value) => isPlainObject(value), { error: () => 'a sweep spec object' },
);

const sweepRequestSchema: z.ZodType<LabSweepRequest> = z.discriminatedUnion('kind', [
  objectSchema({ kind: z.literal('new'), jobs: jobsSchema, name: stringSchema, spec: sweepSpecSchema }),
  objectSchema({ kind: z.literal('resume'), jobs: jobsSchema, sweepId: sweepIdSchema }),
], { error: (issue) => (isPlainObject(issue.input) ? 'one of new, resume' : 'an object') });

/** A point's record and a sweep's results hold non-finite numbers: read back into numbers and checked. */
function readSweepView(value: unknown): unknown {
  return { ...(value as object), results: readObject(value, 'the sweep the server sent').get('results', readSweepResults) };
}

export const LAB_METHODS = {
  /** Starts a new sweep, or resumes a saved one; events arrive through `handlers` until `onDone` or `onError`. */
  startSweep: method({
    type: 'lab-start-sweep', params: objectSchema({ request: sweepRequestSchema }), args: ['request'], returns: returns<LabSweepTicket>(), stream: 'sweep',
  }),
  /** Stops a running sweep: its running points are cancelled (not recorded), complete ones stay. */
  cancelSweep: method({ type: 'lab-cancel-sweep', params: objectSchema({ sweepId: sweepIdSchema }), args: ['sweepId'], returns: returns<null>(), void: true }),
  /** Saved sweeps, newest first, with the columns a researcher filters on. */
  listSweeps: method({ type: 'lab-list-sweeps', params: objectSchema({}), args: [], returns: returns<LabSweepSummary[]>() }),
  loadSweep: method({
    type: 'lab-load-sweep', params: objectSchema({ sweepId: sweepIdSchema }), args: ['sweepId'], returns: returns<LabSweepView>(), readResult: readSweepView,
  }),
  /** One point's eval record. */
  loadPoint: method({
    type: 'lab-load-point', params: objectSchema({ sweepId: sweepIdSchema, pointName: pointNameSchema }), args: ['sweepId', 'pointName'],
    returns: returns<EvalRecord>(), readResult: (value) => readEvalRecord(value, 'the point the server sent'),
  }),
  exportSweep: method({
    type: 'lab-export-sweep', params: objectSchema({ sweepId: sweepIdSchema, format: choiceSchema(['json', 'csv']) }),
    args: ['sweepId', 'format'], returns: returns<RunExport>(),
  }),
} as const;
