import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { RunSettings, SamplingSettings } from '../engine/types.js';
import { quantizedCacheSettingsSchema } from './cache-settings-schema.js';
import type { Read } from './field-readers.js';
import { schemaReader } from './protocol-schema.js';
import { runSettingsSchema, samplingSettingsSchema } from './run-settings-schema.js';

/**
 * RunSettings and its parts as readers (field-readers.ts), for the readers' world: worker messages,
 * run and eval records. Each is its zod declaration (run-settings-schema.ts,
 * cache-settings-schema.ts), so the messages are the declaration's wherever the value arrives.
 */
export const readRunSettings: Read<RunSettings> = schemaReader(runSettingsSchema);
export const readQuantizedCacheSettings: Read<QuantizedCacheSettings> = schemaReader(quantizedCacheSettingsSchema);
export const readSamplingSettings: Read<SamplingSettings> = schemaReader(samplingSettingsSchema);
