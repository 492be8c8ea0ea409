import type { z } from 'zod';
import type { LayerMemory } from '../cache/layer-memory.js';
import type { ErrorStats } from '../quant/error-stats.js';
import type { FlushMetrics, ProcessMemory, ReferenceStepMetrics, StepMetrics, StepTimings } from '../engine/types.js';
import type { Read } from './field-readers.js';
import {
  arraySchema, booleanSchema, choiceSchema, countSchema, numberSchema, objectSchema, readerSchema, schemaReader, stringSchema,
} from './protocol-schema.js';
import { readExtensionMemory } from './read-cache-extensions.js';

/**
 * StepMetrics as they cross a boundary: a `metrics` message (the hot path: a batch of steps every
 * 80 ms), a `run-metrics` event, a run record's `steps`. Numbers may be non-finite (an exact
 * reconstruction's SNR); numberSchema reads JSON's `"Infinity"` back.
 */
export const stepTimingsSchema: z.ZodType<StepTimings> = objectSchema({
  dequantizeMs: numberSchema,
  modelMs: numberSchema,
  quantizeMs: numberSchema,
  referenceMs: numberSchema.optional(),
  totalMs: numberSchema,
});

export const layerMemorySchema: z.ZodType<LayerMemory> = objectSchema({
  tokens: countSchema,
  quantizedTokens: countSchema,
  fullPrecisionTokens: countSchema,
  valueCount: countSchema,
  codeBytes: countSchema,
  metadataBytes: countSchema,
  fullPrecisionBytes: countSchema,
  totalBytes: countSchema,
  fp16BaselineBytes: countSchema,
  fp32BaselineBytes: countSchema,
  workingBytes: countSchema,
  windowTokens: countSchema.optional(),
  fedTokens: countSchema.optional(),
  fedBytes: countSchema.optional(),
  // The extensions' reader is shared with the cache settings' (read-cache-extensions.ts).
  extensions: readerSchema(readExtensionMemory).optional(),
});

export const errorStatsSchema: z.ZodType<ErrorStats> = objectSchema({
  relFroErr: numberSchema,
  maxAbsErr: numberSchema,
  meanAbsErr: numberSchema,
  snrDb: numberSchema,
});

export const flushMetricsSchema: z.ZodType<FlushMetrics> = objectSchema({
  layer: countSchema,
  kind: choiceSchema(['prefill', 'flush']),
  tokens: countSchema,
  key: errorStatsSchema,
  value: errorStatsSchema,
});

export const processMemorySchema: z.ZodType<ProcessMemory> = objectSchema({
  rssBytes: countSchema,
  externalBytes: countSchema,
  arrayBuffersBytes: countSchema,
});

export const referenceStepMetricsSchema: z.ZodType<ReferenceStepMetrics> = objectSchema({
  klDivergence: numberSchema,
  top1Agrees: booleanSchema,
  referenceTokenId: countSchema,
});

export const stepMetricsSchema: z.ZodType<StepMetrics> = objectSchema({
  step: countSchema,
  tokenId: countSchema,
  seqLength: countSchema,
  timings: stepTimingsSchema,
  tokensPerSecond: numberSchema,
  kvBytes: arraySchema(layerMemorySchema.nullable()),
  materializedKvBytes: countSchema,
  flushes: arraySchema(flushMetricsSchema),
  memory: processMemorySchema,
  reference: referenceStepMetricsSchema.optional(),
  text: stringSchema.optional(),
});

/** The schemas as readers, for the record readers (app/record, app/lab/read-eval.ts). */
export const readStepMetrics: Read<StepMetrics> = schemaReader(stepMetricsSchema);
export const readLayerMemory: Read<LayerMemory> = schemaReader(layerMemorySchema);
