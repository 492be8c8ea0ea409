import { ROTATION_KINDS, type CacheExtensions, type LayerMapEntry } from '../cache/cache-extensions.js';
import type { ExtensionMemory } from '../cache/layer-memory.js';
import {
  arrayReader, choiceReader, integerReader, readBoolean, readCount, readFiniteNumber, readObject, readString, rejectField, withOptional, type Read,
} from './field-readers.js';

const readInteger = integerReader(Number.MIN_SAFE_INTEGER);

/**
 * The kvscope extensions as they cross a boundary (a start message, a run record): shape only. Whether
 * the values fit the backend and the model is app/cache/extension-problems.ts's verdict.
 */
export const readCacheExtensions: Read<CacheExtensions> = (value, path) => {
  const fields = readObject(value, path);
  return {
    ...withOptional('nbitsKey', fields.optional('nbitsKey', readInteger)),
    ...withOptional('nbitsValue', fields.optional('nbitsValue', readInteger)),
    ...withOptional('layerMap', fields.optional('layerMap', arrayReader(readLayerMapEntry))),
    ...withOptional('fullPrecisionFirstLayers', fields.optional('fullPrecisionFirstLayers', readInteger)),
    ...withOptional('fullPrecisionLastLayers', fields.optional('fullPrecisionLastLayers', readInteger)),
    ...withOptional('sinkTokens', fields.optional('sinkTokens', readInteger)),
    ...withOptional('rotation', fields.optional('rotation', choiceReader(ROTATION_KINDS))),
    ...withOptional('rotateValues', fields.optional('rotateValues', readBoolean)),
    ...withOptional('outlierQuantile', fields.optional('outlierQuantile', readFiniteNumber)),
    ...withOptional('kvFormatKey', fields.optional('kvFormatKey', readString)),
    ...withOptional('kvFormatValue', fields.optional('kvFormatValue', readString)),
    ...withOptional('calculateKvScales', fields.optional('calculateKvScales', readBoolean)),
  };
};

const readLayerMapEntry: Read<LayerMapEntry> = (value, path) => {
  const fields = readObject(value, path);
  const layer = fields.get('layer', readCount);
  const readTrue: Read<true> = (field, fieldPath) => (field === true ? true : rejectField(fieldPath, 'true', field));
  if (fields.optional('fullPrecision', readTrue) !== undefined) return { layer, fullPrecision: true };
  // A side's bits or 'full' (the cache plan's full-precision side, cache-plan.ts).
  const readSideBits: Read<number | 'full'> = (field, fieldPath) => (field === 'full' ? 'full' : readInteger(field, fieldPath));
  return {
    layer, nbitsKey: fields.get('nbitsKey', readSideBits), nbitsValue: fields.get('nbitsValue', readSideBits),
    // a side in a runtime format (the layer map's format_key/format_value, a kvscope extension)
    ...withOptional('formatKey', fields.optional('formatKey', readString)),
    ...withOptional('formatValue', fields.optional('formatValue', readString)),
  };
};

export const readExtensionMemory: Read<ExtensionMemory> = (value, path) => {
  const fields = readObject(value, path);
  return {
    sinkTokens: fields.get('sinkTokens', readCount),
    sinkBytes: fields.get('sinkBytes', readCount),
    outliers: fields.get('outliers', readCount),
    outlierIndexBytes: fields.get('outlierIndexBytes', readCount),
    outlierValueBytes: fields.get('outlierValueBytes', readCount),
  };
};
