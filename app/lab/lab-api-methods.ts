import { z } from 'zod';
import { method, returns } from '../protocol/api-declaration.js';
import { anyIntegerSchema } from '../protocol/cache-settings-schema.js';
import { readObject } from '../protocol/field-readers.js';
import {
  arraySchema, booleanSchema, choiceSchema, integerSchema, isPlainObject, objectSchema, patternSchema, stringSchema,
} from '../protocol/protocol-schema.js';
import { runSettingsSchema } from '../protocol/run-settings-schema.js';
import type { RunExport } from '../protocol/workbench-api.js';
import { readEvalRecord, type EvalRecord } from './eval-record.js';
import {
  POINT_NAME_PATTERN, SWEEP_ID_PATTERN, type LabSweepRequest, type LabSweepSummary, type LabSweepTicket, type LabSweepView,
} from './lab-api.js';
import { readSweepResults } from './lab-api-messages.js';
import { RETRIEVAL_TASK_NAMES } from './retrieval/retrieval-task.js';
import { SENSITIVITY_PRESETS } from './sensitivity.js';

/**
 * The declaration of the Lab's API methods (WorkbenchApi's `lab`), as app/protocol/api-methods.ts
 * declares the rest: LabApi, the preload's `lab…` functions, both clients and the host's dispatch
 * follow from this list.
 */

export const sweepIdSchema = patternSchema('a sweep id (letters, digits, ".", "_" and "-")', (id) => SWEEP_ID_PATTERN.test(id));
const pointNameSchema = patternSchema('a point name', (name) => POINT_NAME_PATTERN.test(name));
const jobsSchema = integerSchema(1);

/** What the text evaluation scores: a text file on the host (absent: kvscope's own text), its windows. */
const textEvaluationSchema = objectSchema({
  kind: z.literal('text'),
  text: stringSchema.optional(),
  /** tokens per window, and windows evaluated (eval's --context and --windows, checked by eval per point) */
  context: anyIntegerSchema,
  windows: anyIntegerSchema,
});

/** A retrieval task (kvscope eval --task): generated prompts on the depth × length grid in place of a text. */
const retrievalEvaluationSchema = objectSchema({
  kind: z.literal('retrieval'),
  task: choiceSchema(RETRIEVAL_TASK_NAMES),
  /** prompt lengths in tokens and needle depths in percent, comma-separated as --lengths and --depths take them (`1k,2k`) */
  lengths: stringSchema,
  depths: stringSchema,
  samples: anyIntegerSchema,
  seed: anyIntegerSchema,
});

/**
 * A new sweep as the Lab sends it, typed: the Run panel's settings (the RunSettings it sends to
 * startRun, extensions and all), the values each quantization field takes (an empty list: the run's
 * value), what is scored, and a sensitivity preset. The host turns it into the sweep's spec with
 * labSweepSpec (lab-sweep-spec.ts), the one function that writes typed settings as eval's options;
 * values are checked there and by eval per point, so counts here are any integers.
 */
export const labSweepSettingsSchema = objectSchema({
  run: runSettingsSchema,
  vary: objectSchema({
    backend: arraySchema(stringSchema),
    nbits: arraySchema(anyIntegerSchema),
    groupSize: arraySchema(anyIntegerSchema),
    residualLength: arraySchema(anyIntegerSchema),
    axisKey: arraySchema(anyIntegerSchema),
    axisValue: arraySchema(anyIntegerSchema),
  }),
  /** also evaluate the full-precision dynamic cache (the reference itself, KLD 0) */
  includeDynamic: booleanSchema,
  evaluation: z.discriminatedUnion('kind', [textEvaluationSchema, retrievalEvaluationSchema], {
    error: (issue) => (isPlainObject(issue.input) ? 'one of text, retrieval' : 'an object'),
  }),
  preset: choiceSchema(SENSITIVITY_PRESETS).optional(),
});

export type LabSweepSettings = z.output<typeof labSweepSettingsSchema>;

const sweepRequestSchema: z.ZodType<LabSweepRequest> = z.discriminatedUnion('kind', [
  objectSchema({ kind: z.literal('new'), jobs: jobsSchema, name: stringSchema, settings: labSweepSettingsSchema }),
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
