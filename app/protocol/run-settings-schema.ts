import type { z } from 'zod';
import { DEQUANTIZE_PATHS, EXECUTION_PROVIDERS, PROMPT_FORMATS } from '../engine/types.js';
import { anyIntegerSchema, countSchema, quantizedCacheSettingsSchema } from './cache-settings-schema.js';
import {
  arraySchema, booleanSchema, choiceSchema, finiteNumberSchema, integerSchema, objectSchema, stringSchema,
} from './protocol-schema.js';

/**
 * RunSettings, declared once: what a run is asked to do, as the run panel sends it, a worker receives
 * it and a run record holds it. The type follows from the schema (app/engine/types.ts re-exports
 * it). Only the shape is checked; whether the values make a valid run (nbits for the backend,
 * temperature > 0) is the preflight's and the engine's verdict, with their exact messages. Fields are
 * listed in the order they are checked: the first problem is the one reported.
 */

type Choices<T extends string> = readonly [T, ...T[]];

export const samplingSettingsSchema = objectSchema({
  /** greedy decoding (argmax); the other fields are then ignored */
  greedy: booleanSchema,
  temperature: finiteNumberSchema,
  /** 0 = no top-k filter */
  topK: anyIntegerSchema,
  /** 1 = no nucleus filter */
  topP: finiteNumberSchema,
  /** seeds the sampler's PRNG: the same seed gives the same tokens */
  seed: anyIntegerSchema,
});

export const runSettingsSchema = objectSchema({
  /** a folder path, or `synthetic` / `synthetic-hybrid` */
  model: stringSchema,
  /** a file under the folder's `onnx/` (or beside config.json); default: the folder's `model.onnx` */
  onnxFile: stringSchema.optional(),
  executionProvider: choiceSchema(EXECUTION_PROVIDERS as Choices<(typeof EXECUTION_PROVIDERS)[number]>),
  cacheMode: choiceSchema(['dynamic', 'quantized']),
  /** used when cacheMode is `quantized` (its layerPolicy too) */
  quantization: quantizedCacheSettingsSchema,
  prompt: stringSchema,
  /** how the prompt becomes tokens; absent means `text` */
  promptFormat: choiceSchema(PROMPT_FORMATS as Choices<(typeof PROMPT_FORMATS)[number]>).optional(),
  /**
   * Left-pads the encoded prompt to this many tokens with the pad token, masked out by the attention
   * mask, as transformers' `tokenizer(..., padding="max_length", max_length=N)` with
   * `padding_side="left"` feeds generate(); absent (or not longer than the prompt): no padding.
   */
  padPromptTo: integerSchema(1).optional(),
  /**
   * the prompt as token ids, fed as they are (no tokenizer, no BOS added): for folders without a
   * tokenizer, whose generated text is then shown as ids. `prompt` is ignored when this is set.
   */
  promptTokenIds: arraySchema(countSchema).readonly().optional(),
  maxNewTokens: countSchema,
  sampling: samplingSettingsSchema.readonly(),
  /** replay the same tokens through a full-precision cache, teacher-forced (KL, top-1 agreement) */
  reference: booleanSchema,
  /**
   * quantized mode: where the cache is dequantized; absent means the default, `graph` where the graph
   * path can express the settings, else `host` (the result's `dequantize` says which ran, and why)
   */
  dequantize: choiceSchema(DEQUANTIZE_PATHS as Choices<(typeof DEQUANTIZE_PATHS)[number]>).optional(),
  /** keep decoding past EOS until maxNewTokens (bench runs that must all do the same work) */
  ignoreEos: booleanSchema.optional(),
  /**
   * refuse, before the prompt is encoded or the graph loaded, a run whose prompt + max new tokens
   * pass max_position_embeddings (graphs run past it, untrained); `kvscope run` sets it unless
   * `--allow-past-positions`. Absent: allowed, and the result's diagnostics say so (the run panel
   * shows the same note before the run).
   */
  refusePastPositions: booleanSchema.optional(),
}).readonly();

/** What a run is asked to do (the schema above). */
export type RunSettings = z.output<typeof runSettingsSchema>;
export type SamplingSettings = Readonly<z.output<typeof samplingSettingsSchema>>;
