import type { LayerMemory } from '../cache/layer-memory.js';
import { readExtensionMemory } from './read-cache-extensions.js';
import type { ErrorStats } from '../quant/error-stats.js';
import type { FlushMetrics, ProcessMemory, ReferenceStepMetrics, StepMetrics, StepTimings } from '../engine/types.js';
import {
  arrayReader, choiceReader, nullableReader, readBoolean, readCount, readNumber, readObject, readString, withOptional, type Read,
} from './field-readers.js';

/** StepMetrics as they cross a boundary: a `metrics` message, a run record's `steps`. */
export const readStepMetrics: Read<StepMetrics> = (value, path) => {
  const fields = readObject(value, path);
  return {
    step: fields.get('step', readCount),
    tokenId: fields.get('tokenId', readCount),
    seqLength: fields.get('seqLength', readCount),
    timings: fields.get('timings', readStepTimings),
    tokensPerSecond: fields.get('tokensPerSecond', readNumber),
    kvBytes: fields.get('kvBytes', arrayReader(nullableReader(readLayerMemory))),
    materializedKvBytes: fields.get('materializedKvBytes', readCount),
    flushes: fields.get('flushes', arrayReader(readFlushMetrics)),
    memory: fields.get('memory', readProcessMemory),
    ...withOptional('reference', fields.optional('reference', readReferenceStepMetrics)),
    ...withOptional('text', fields.optional('text', readString)),
  };
};

export const readStepTimings: Read<StepTimings> = (value, path) => {
  const fields = readObject(value, path);
  return {
    dequantizeMs: fields.get('dequantizeMs', readNumber),
    modelMs: fields.get('modelMs', readNumber),
    quantizeMs: fields.get('quantizeMs', readNumber),
    ...withOptional('referenceMs', fields.optional('referenceMs', readNumber)),
    totalMs: fields.get('totalMs', readNumber),
  };
};

export const readLayerMemory: Read<LayerMemory> = (value, path) => {
  const fields = readObject(value, path);
  return {
    tokens: fields.get('tokens', readCount),
    quantizedTokens: fields.get('quantizedTokens', readCount),
    fullPrecisionTokens: fields.get('fullPrecisionTokens', readCount),
    valueCount: fields.get('valueCount', readCount),
    codeBytes: fields.get('codeBytes', readCount),
    metadataBytes: fields.get('metadataBytes', readCount),
    fullPrecisionBytes: fields.get('fullPrecisionBytes', readCount),
    totalBytes: fields.get('totalBytes', readCount),
    fp16BaselineBytes: fields.get('fp16BaselineBytes', readCount),
    fp32BaselineBytes: fields.get('fp32BaselineBytes', readCount),
    workingBytes: fields.get('workingBytes', readCount),
    ...withOptional('windowTokens', fields.optional('windowTokens', readCount)),
    ...withOptional('fedTokens', fields.optional('fedTokens', readCount)),
    ...withOptional('fedBytes', fields.optional('fedBytes', readCount)),
    ...withOptional('extensions', fields.optional('extensions', readExtensionMemory)),
  };
};

export const readErrorStats: Read<ErrorStats> = (value, path) => {
  const fields = readObject(value, path);
  return {
    relFroErr: fields.get('relFroErr', readNumber),
    maxAbsErr: fields.get('maxAbsErr', readNumber),
    meanAbsErr: fields.get('meanAbsErr', readNumber),
    snrDb: fields.get('snrDb', readNumber),
  };
};

export const readFlushMetrics: Read<FlushMetrics> = (value, path) => {
  const fields = readObject(value, path);
  return {
    layer: fields.get('layer', readCount),
    kind: fields.get('kind', choiceReader(['prefill', 'flush'] as const)),
    tokens: fields.get('tokens', readCount),
    key: fields.get('key', readErrorStats),
    value: fields.get('value', readErrorStats),
  };
};

export const readProcessMemory: Read<ProcessMemory> = (value, path) => {
  const fields = readObject(value, path);
  return {
    rssBytes: fields.get('rssBytes', readCount),
    externalBytes: fields.get('externalBytes', readCount),
    arrayBuffersBytes: fields.get('arrayBuffersBytes', readCount),
  };
};

export const readReferenceStepMetrics: Read<ReferenceStepMetrics> = (value, path) => {
  const fields = readObject(value, path);
  return {
    klDivergence: fields.get('klDivergence', readNumber),
    top1Agrees: fields.get('top1Agrees', readBoolean),
    referenceTokenId: fields.get('referenceTokenId', readCount),
  };
};
