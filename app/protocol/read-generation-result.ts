import type { GenerationResult, GenerationTimings, LayerQuantizeError, ModelIdentity } from '../engine/generation-result.js';
import type { ModelDiagnostic } from '../engine/model-diagnostic.js';
import { DEQUANTIZE_PATHS, EXECUTION_PROVIDERS, type ReferenceSummary } from '../engine/types.js';
import {
  arrayReader, choiceReader, nullableReader, readBoolean, readCount, readNumber, readObject, readString, rejectField, withOptional, type Read,
} from './field-readers.js';
import { readDiagnostic } from './read-diagnostic.js';
import { readRunSettings } from './read-run-settings.js';
import { readErrorStats, readLayerMemory, readStepMetrics } from './read-step-metrics.js';

/** GenerationResult as it crosses a boundary: a `done` message, a run record's `result`. */
export const readGenerationResult: Read<GenerationResult> = (value, path) => {
  const fields = readObject(value, path);
  return {
    settings: fields.get('settings', readRunSettings),
    model: fields.get('model', readModelIdentity),
    executionProvider: fields.get('executionProvider', choiceReader(EXECUTION_PROVIDERS)),
    ortVersion: fields.get('ortVersion', readString),
    promptTokenIds: fields.get('promptTokenIds', arrayReader(readCount)),
    generatedTokenIds: fields.get('generatedTokenIds', arrayReader(readCount)),
    text: fields.get('text', readString),
    stopReason: fields.get('stopReason', choiceReader(['eos', 'max-new-tokens', 'cancelled'] as const)),
    steps: fields.get('steps', arrayReader(readStepMetrics)),
    flushCounts: fields.get('flushCounts', arrayReader(nullableReader(readCount))),
    kvBytes: fields.get('kvBytes', arrayReader(nullableReader(readLayerMemory))),
    kvBytesTotal: fields.get('kvBytesTotal', readLayerMemory),
    layerErrors: fields.get('layerErrors', arrayReader(nullableReader(readLayerQuantizeError))),
    reference: fields.get('reference', nullableReader(readReferenceSummary)),
    timings: fields.get('timings', readGenerationTimings),
    // The engine owns the list of model diagnostic codes; a code this build does not know is still
    // shown with its message rather than failing the whole result.
    diagnostics: fields.get('diagnostics', arrayReader(readDiagnostic)) as ModelDiagnostic[],
    ...withOptional('dequantize', fields.optional('dequantize', choiceReader(DEQUANTIZE_PATHS))),
  };
};

export const readModelIdentity: Read<ModelIdentity> = (value, path) => {
  const fields = readObject(value, path);
  return {
    folder: fields.get('folder', readString),
    onnxFile: fields.get('onnxFile', readString),
    onnxSha256: fields.get('onnxSha256', readSha256),
    configSha256: fields.get('configSha256', readSha256),
    modelType: fields.get('modelType', nullableReader(readString)),
    numLayers: fields.get('numLayers', readCount),
    kvDtype: fields.get('kvDtype', choiceReader(['float32', 'float16'] as const)),
    ...withOptional('layerKinds', fields.optional('layerKinds', arrayReader(readString))),
  };
};

const readSha256: Read<string> = (value, path) => {
  const text = readString(value, path);
  return /^[0-9a-f]{64}$/.test(text) ? text : rejectField(path, 'a sha256 digest (64 lowercase hex digits)', value);
};

export const readLayerQuantizeError: Read<LayerQuantizeError> = (value, path) => {
  const fields = readObject(value, path);
  return {
    layer: fields.get('layer', readCount),
    step: fields.get('step', readCount),
    kind: fields.get('kind', choiceReader(['prefill', 'flush'] as const)),
    key: fields.get('key', readErrorStats),
    value: fields.get('value', readErrorStats),
  };
};

export const readReferenceSummary: Read<ReferenceSummary> = (value, path) => {
  const fields = readObject(value, path);
  return {
    steps: fields.get('steps', readCount),
    meanKl: fields.get('meanKl', readNumber),
    maxKl: fields.get('maxKl', readNumber),
    top1Agreement: fields.get('top1Agreement', readNumber),
    firstDivergenceStep: fields.get('firstDivergenceStep', nullableReader(readCount)),
  };
};

export const readGenerationTimings: Read<GenerationTimings> = (value, path) => {
  const fields = readObject(value, path);
  return {
    loadMs: fields.get('loadMs', readNumber),
    ...withOptional('rewriteMs', fields.optional('rewriteMs', readNumber)),
    ...withOptional('sessionReused', fields.optional('sessionReused', readBoolean)),
    prefillMs: fields.get('prefillMs', readNumber),
    decodeMs: fields.get('decodeMs', readNumber),
    decodeTokens: fields.get('decodeTokens', readCount),
    decodeTokensPerSecond: fields.get('decodeTokensPerSecond', readNumber),
    totalMs: fields.get('totalMs', readNumber),
  };
};
