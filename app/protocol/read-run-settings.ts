import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { DEQUANTIZE_PATHS, EXECUTION_PROVIDERS, PROMPT_FORMATS, type RunSettings, type SamplingSettings } from '../engine/types.js';
import {
  arrayReader, choiceReader, integerReader, readBoolean, readCount, readFiniteNumber, readObject, readString, withOptional, type Read,
} from './field-readers.js';
import { readCacheExtensions } from './read-cache-extensions.js';

/**
 * RunSettings as they cross a boundary (a `start` message, a run record). Only the shape is checked
 * here; whether the values make a valid run (nbits for the backend, temperature > 0) is the
 * preflight's and the engine's verdict, with their exact messages.
 */
export const readRunSettings: Read<RunSettings> = (value, path) => {
  const fields = readObject(value, path);
  return {
    model: fields.get('model', readString),
    ...withOptional('onnxFile', fields.optional('onnxFile', readString)),
    executionProvider: fields.get('executionProvider', choiceReader(EXECUTION_PROVIDERS)),
    cacheMode: fields.get('cacheMode', choiceReader(['dynamic', 'quantized'] as const)),
    quantization: fields.get('quantization', readQuantizedCacheSettings),
    prompt: fields.get('prompt', readString),
    ...withOptional('promptFormat', fields.optional('promptFormat', choiceReader(PROMPT_FORMATS))),
    ...withOptional('padPromptTo', fields.optional('padPromptTo', integerReader(1))),
    ...withOptional('promptTokenIds', fields.optional('promptTokenIds', arrayReader(readCount))),
    maxNewTokens: fields.get('maxNewTokens', integerReader(0)),
    sampling: fields.get('sampling', readSamplingSettings),
    reference: fields.get('reference', readBoolean),
    ...withOptional('dequantize', fields.optional('dequantize', choiceReader(DEQUANTIZE_PATHS))),
    ...withOptional('ignoreEos', fields.optional('ignoreEos', readBoolean)),
    ...withOptional('refusePastPositions', fields.optional('refusePastPositions', readBoolean)),
  };
};

const readInteger = integerReader(Number.MIN_SAFE_INTEGER);

export const readQuantizedCacheSettings: Read<QuantizedCacheSettings> = (value, path) => {
  const fields = readObject(value, path);
  return {
    // Any string: transformers' own refusal of an unknown backend is part of the preflight's verdict.
    backend: fields.get('backend', readString),
    nbits: fields.get('nbits', readInteger),
    axisKey: fields.get('axisKey', readInteger),
    axisValue: fields.get('axisValue', readInteger),
    groupSize: fields.get('groupSize', readInteger),
    residualLength: fields.get('residualLength', readInteger),
    layerPolicy: fields.get('layerPolicy', choiceReader(['all', 'full-attention-only'] as const)),
    ...withOptional('extensions', fields.optional('extensions', readCacheExtensions)),
  };
};

export const readSamplingSettings: Read<SamplingSettings> = (value, path) => {
  const fields = readObject(value, path);
  return {
    greedy: fields.get('greedy', readBoolean),
    temperature: fields.get('temperature', readFiniteNumber),
    topK: fields.get('topK', readInteger),
    topP: fields.get('topP', readFiniteNumber),
    seed: fields.get('seed', readInteger),
  };
};
