import { z } from 'zod';
import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { quantizedLayerEntry, ROTATION_KINDS, type CacheExtensions, type EntrySide, type LayerMapEntry } from '../cache/cache-extensions.js';
import {
  arraySchema, booleanSchema, choiceSchema, finiteNumberSchema, integerSchema, objectSchema, stringSchema,
} from './protocol-schema.js';

/**
 * The quantized cache's settings and their kvscope extensions as they cross a boundary (a start
 * message, an API request, a run or eval record), declared once with zod. Only the shape is checked
 * here: whether the values fit the backend and the model is the preflight's verdict
 * (app/cache/extension-problems.ts), with its exact messages. Fields are listed in the order they are
 * checked, so the first problem is the one reported.
 */

/** Any integer: a value out of range is the preflight's to explain (with transformers' message). */
export const anyIntegerSchema = integerSchema(Number.MIN_SAFE_INTEGER);
export const countSchema = integerSchema(0);


/**
 * One layer's entry: `{layer, fullPrecision: true}` (its bits, if any, are not read), or its own K and
 * V sides, each its bits (required) or its runtime format (`formatKey`/`formatValue`: no bits then).
 */
const layerMapEntrySchema: z.ZodType<LayerMapEntry> = objectSchema({
  layer: countSchema,
  fullPrecision: z.literal(true, { error: () => 'true' }).optional(),
  nbitsKey: z.unknown().optional(),
  nbitsValue: z.unknown().optional(),
  // a side in a runtime format (the layer map's format_key/format_value, a kvscope extension)
  formatKey: stringSchema.optional(),
  formatValue: stringSchema.optional(),
}).transform((entry, context): LayerMapEntry => {
  if (entry.fullPrecision === true) return { layer: entry.layer, fullPrecision: true };
  // A side in a runtime format carries no bits; the placeholder older records wrote there (8) is not read.
  const side = (key: 'nbitsKey' | 'nbitsValue', format: string | undefined): EntrySide => {
    if (format !== undefined) return { format };
    // A side's bits or `full` (the cache plan's full-precision side, cache-plan.ts).
    if (entry[key] === 'full') return { bits: 'full' };
    const read = anyIntegerSchema.safeParse(entry[key]);
    if (read.success) return { bits: read.data };
    context.addIssue({ code: 'custom', message: `an integer ≥ ${Number.MIN_SAFE_INTEGER}`, path: [key], input: entry[key] });
    return { bits: 0 };
  };
  const key = side('nbitsKey', entry.formatKey);
  if (context.issues.length > 0) return z.NEVER;
  const value = side('nbitsValue', entry.formatValue);
  if (context.issues.length > 0) return z.NEVER;
  return quantizedLayerEntry(entry.layer, key, value);
});

export const cacheExtensionsSchema: z.ZodType<CacheExtensions> = objectSchema({
  nbitsKey: anyIntegerSchema.optional(),
  nbitsValue: anyIntegerSchema.optional(),
  layerMap: arraySchema(layerMapEntrySchema).optional(),
  fullPrecisionFirstLayers: anyIntegerSchema.optional(),
  fullPrecisionLastLayers: anyIntegerSchema.optional(),
  sinkTokens: anyIntegerSchema.optional(),
  rotation: choiceSchema(ROTATION_KINDS as readonly ['hadamard']).optional(),
  rotateValues: booleanSchema.optional(),
  outlierQuantile: finiteNumberSchema.optional(),
  kvFormatKey: stringSchema.optional(),
  kvFormatValue: stringSchema.optional(),
  calculateKvScales: booleanSchema.optional(),
});

export const quantizedCacheSettingsSchema: z.ZodType<QuantizedCacheSettings> = objectSchema({
  // Any string: transformers' own refusal of an unknown backend is part of the preflight's verdict.
  backend: stringSchema,
  nbits: anyIntegerSchema,
  axisKey: anyIntegerSchema,
  axisValue: anyIntegerSchema,
  groupSize: anyIntegerSchema,
  residualLength: anyIntegerSchema,
  layerPolicy: choiceSchema(['all', 'full-attention-only']),
  extensions: cacheExtensionsSchema.optional(),
});
