import type { z } from 'zod';
import type { GenerationResult, GenerationTimings, LayerQuantizeError, ModelIdentity } from '../engine/generation-result.js';
import type { ModelDiagnostic } from '../engine/model-diagnostic.js';
import { LOGITS_ROWS_MODES, type SessionCompute } from '../engine/session-compute.js';
import { DEQUANTIZE_PATHS, EXECUTION_PROVIDERS, type ReferenceSummary, type RunSettings } from '../engine/types.js';
import type { Read } from './field-readers.js';
import {
  arraySchema, booleanSchema, choiceSchema, countSchema, numberSchema, objectSchema, patternSchema, readerSchema, schemaReader, stringSchema,
} from './protocol-schema.js';
import { diagnosticSchema } from './read-diagnostic.js';
import { readRunSettings } from './read-run-settings.js';
import { errorStatsSchema, layerMemorySchema, stepMetricsSchema } from './read-step-metrics.js';

/** GenerationResult as it crosses a boundary: a `done` message, a `run-done` event, a run record's `result`. */

const sha256Schema = patternSchema('a sha256 digest (64 lowercase hex digits)', (text) => /^[0-9a-f]{64}$/.test(text));

export const modelIdentitySchema: z.ZodType<ModelIdentity> = objectSchema({
  folder: stringSchema,
  onnxFile: stringSchema,
  onnxSha256: sha256Schema,
  configSha256: sha256Schema,
  modelType: stringSchema.nullable(),
  numLayers: countSchema,
  kvDtype: choiceSchema(['float32', 'float16']),
  layerKinds: arraySchema(stringSchema).optional(),
});

export const layerQuantizeErrorSchema: z.ZodType<LayerQuantizeError> = objectSchema({
  layer: countSchema,
  step: countSchema,
  kind: choiceSchema(['prefill', 'flush']),
  key: errorStatsSchema,
  value: errorStatsSchema,
});

export const referenceSummarySchema: z.ZodType<ReferenceSummary> = objectSchema({
  steps: countSchema,
  meanKl: numberSchema,
  maxKl: numberSchema,
  top1Agreement: numberSchema,
  firstDivergenceStep: countSchema.nullable(),
});

export const sessionComputeSchema: z.ZodType<SessionCompute> = objectSchema({
  logitsRows: choiceSchema(LOGITS_ROWS_MODES),
  prepacked: booleanSchema,
});

export const generationTimingsSchema: z.ZodType<GenerationTimings> = objectSchema({
  loadMs: numberSchema,
  rewriteMs: numberSchema.optional(),
  sessionReused: booleanSchema.optional(),
  prefillMs: numberSchema,
  decodeMs: numberSchema,
  decodeTokens: countSchema,
  decodeTokensPerSecond: numberSchema,
  totalMs: numberSchema,
});

/** RunSettings keep their reader: run records and API requests share it (api-methods.ts). */
export const runSettingsSchema: z.ZodType<RunSettings> = readerSchema<RunSettings>(readRunSettings);

export const generationResultSchema: z.ZodType<GenerationResult> = objectSchema({
  settings: runSettingsSchema,
  model: modelIdentitySchema,
  executionProvider: choiceSchema(EXECUTION_PROVIDERS),
  ortVersion: stringSchema,
  promptTokenIds: arraySchema(countSchema),
  generatedTokenIds: arraySchema(countSchema),
  text: stringSchema,
  stopReason: choiceSchema(['eos', 'max-new-tokens', 'cancelled']),
  steps: arraySchema(stepMetricsSchema),
  flushCounts: arraySchema(countSchema.nullable()),
  kvBytes: arraySchema(layerMemorySchema.nullable()),
  kvBytesTotal: layerMemorySchema,
  layerErrors: arraySchema(layerQuantizeErrorSchema.nullable()),
  reference: referenceSummarySchema.nullable(),
  timings: generationTimingsSchema,
  // The engine owns the list of model diagnostic codes; a code this build does not know is still
  // shown with its message rather than failing the whole result.
  diagnostics: arraySchema(diagnosticSchema) as unknown as z.ZodType<ModelDiagnostic[]>,
  dequantize: choiceSchema(DEQUANTIZE_PATHS).optional(),
  session: sessionComputeSchema.optional(),
});

/** The schemas as readers, for the record readers (app/record, app/lab/read-eval.ts). */
export const readGenerationResult: Read<GenerationResult> = schemaReader(generationResultSchema);
export const readModelIdentity: Read<ModelIdentity> = schemaReader(modelIdentitySchema);
