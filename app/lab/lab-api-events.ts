import { z } from 'zod';
import { runErrorPayloadSchema, requestIdSchema } from '../protocol/messages.js';
import type { MessagesOf } from '../protocol/message-table.js';
import {
  arraySchema, booleanSchema, choiceSchema, countSchema, literalSchema, numberSchema, objectSchema, patternSchema, stringSchema,
} from '../protocol/protocol-schema.js';
import { SWEEP_ID_PATTERN, type LabSweepProgress } from './lab-api.js';
import type { RetrievalMapJson } from './sweep-folder.js';
import type { RetrievalRow, SweepResults, SweepRow } from './sweep-results.js';
import type { SweepValue } from './sweep-spec.js';

/**
 * The declaration of a sweep's events, host → page, as app/protocol/api-events.ts declares a run's:
 * each event's fields with their schemas, checked by the page on every frame from the serve host
 * (parse-api-message.ts) and typed from here (lab-api-messages.ts LabApiEvent). Each carries the id
 * of the `lab-start-sweep` request that began the sweep; `lab-sweep-done` or `lab-sweep-error` is the
 * last. A row is results.json's (sweep-results.ts); non-finite numbers arrive as JSON's "Infinity".
 */

const sweepIdSchema = patternSchema('a sweep id (letters, digits, ".", "_" and "-")', (id) => SWEEP_ID_PATTERN.test(id));

const optionValuesSchema: z.ZodType<Readonly<Record<string, SweepValue>>> = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean()], { error: () => 'a string, number or boolean' }),
  { error: () => 'an object' },
);

const rowSettingsSchema = objectSchema({
  cacheMode: stringSchema,
  backend: stringSchema,
  nbits: numberSchema,
  axisKey: numberSchema,
  axisValue: numberSchema,
  groupSize: numberSchema,
  residualLength: numberSchema,
  layers: stringSchema,
  parts: stringSchema,
  dequantize: stringSchema.optional(),
  logitsRows: stringSchema.optional(),
  prepacked: booleanSchema.optional(),
  family: stringSchema.optional(),
  kvFormatKey: stringSchema.optional(),
  kvFormatValue: stringSchema.optional(),
});

const rowResultSchema = objectSchema({
  tokens: numberSchema, ppl: numberSchema, pplError: numberSchema, pplReference: numberSchema, pplReferenceError: numberSchema,
  deltaPpl: numberSchema, deltaPplError: numberSchema, pplRatio: numberSchema, pplRatioError: numberSchema,
  kldMean: numberSchema, kldMeanError: numberSchema, kldMedian: numberSchema, kldP99: numberSchema, kldP999: numberSchema, kldMax: numberSchema,
  top1Agreement: numberSchema, top1AgreementError: numberSchema, deltaPMean: numberSchema, deltaPMeanError: numberSchema,
  deltaPRms: numberSchema, deltaPRmsError: numberSchema, bitsPerValue: numberSchema, formatBitsPerValue: numberSchema.optional(),
  storedBytes: numberSchema, fp16BaselineBytes: numberSchema,
});

const retrievalMapSchema: z.ZodType<RetrievalMapJson> = objectSchema({
  lengths: arraySchema(numberSchema),
  depths: arraySchema(numberSchema.nullable()),
  accuracy: arraySchema(arraySchema(numberSchema.nullable())),
});

const retrievalRowSchema: z.ZodType<RetrievalRow> = objectSchema({
  task: stringSchema,
  metric: stringSchema,
  accuracy: numberSchema,
  accuracyReference: numberSchema,
  samples: countSchema,
  kvBytesLongest: numberSchema,
  map: retrievalMapSchema,
  referenceMap: retrievalMapSchema,
});

export const sweepRowSchema: z.ZodType<SweepRow> = objectSchema({
  index: countSchema,
  name: stringSchema,
  status: choiceSchema(['ok', 'refused', 'failed']),
  reason: stringSchema.nullable(),
  options: optionValuesSchema,
  settings: rowSettingsSchema.nullable(),
  result: rowResultSchema.nullable(),
  retrieval: retrievalRowSchema.optional(),
});

export const sweepResultsSchema: z.ZodType<SweepResults> = objectSchema({
  format: literalSchema('kvscope-sweep-results'),
  version: literalSchema(1),
  specSha256: stringSchema,
  points: countSchema,
  rows: arraySchema(sweepRowSchema),
});

const progressSchema: z.ZodType<LabSweepProgress> = objectSchema({ done: countSchema, total: countSchema, running: arraySchema(stringSchema) });

export const LAB_EVENTS = {
  'lab-sweep-progress': objectSchema({ id: requestIdSchema, sweepId: sweepIdSchema, progress: progressSchema }),
  /** a point finished (measured, refused or failed): its results row */
  'lab-sweep-point': objectSchema({ id: requestIdSchema, sweepId: sweepIdSchema, row: sweepRowSchema }),
  'lab-sweep-done': objectSchema({ id: requestIdSchema, sweepId: sweepIdSchema, interrupted: booleanSchema, results: sweepResultsSchema }),
  'lab-sweep-error': objectSchema({ id: requestIdSchema, sweepId: sweepIdSchema, error: runErrorPayloadSchema }),
} as const;

export type LabApiEvent = MessagesOf<typeof LAB_EVENTS>;
