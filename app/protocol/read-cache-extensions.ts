import type { ExtensionMemory } from '../cache/layer-memory.js';
import { readCount, readObject, type Read } from './field-readers.js';

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
