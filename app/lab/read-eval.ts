import { DEQUANTIZE_PATHS, EXECUTION_PROVIDERS } from '../engine/types.js';
import { LOGITS_ROWS_MODES, type SessionCompute } from '../engine/session-compute.js';
import {
  arrayReader, choiceReader, nullableReader, readBoolean, readCount, readNumber, readObject, readString, withOptional, type Read,
} from '../protocol/field-readers.js';
import { readDiagnostic } from '../protocol/read-diagnostic.js';
import { readModelIdentity } from '../protocol/read-generation-result.js';
import { readQuantizedCacheSettings } from '../protocol/read-run-settings.js';
import { readLayerMemory } from '../protocol/read-step-metrics.js';
import type { Diagnostic } from '../preflight/diagnostic.js';
import type { EvalResult, RecordedEvalSettings } from './eval-result.js';
import type { EvalSettings, TextFilePrefix, WindowSettings } from './eval-settings.js';
import type { DeltaPSummary, EvalSummary, KldSummary } from './eval-summary.js';
import type { LayerErrorSummary, SideErrorSummary } from './layer-errors.js';
import { KV_PARTS, type LabTargets } from './lab-targets.js';

/**
 * Readers for the lab's data where it crosses a boundary: a lab worker's messages, a sweep point's
 * settings.json and eval.json. Only the shape is checked (field-readers.ts); whether the values make a
 * valid evaluation is the engine's verdict.
 */
const FEEDS = ['auto', 'chunked', 'token-by-token'] as const;

export const readWindowSettings: Read<WindowSettings> = (value, path) => {
  const fields = readObject(value, path);
  return {
    context: fields.get('context', readCount),
    stride: fields.get('stride', readCount),
    prefill: fields.get('prefill', readCount),
    maxWindows: fields.get('maxWindows', nullableReader(readCount)),
  };
};

const readTextFilePrefix: Read<TextFilePrefix> = (value, path) => {
  const fields = readObject(value, path);
  return { path: fields.get('path', readString), bytes: fields.get('bytes', readCount), sha256: fields.get('sha256', readString), prefixBytes: fields.get('prefixBytes', readCount) };
};

export const readLabTargets: Read<LabTargets> = (value, path) => {
  const fields = readObject(value, path);
  return { layers: fields.get('layers', nullableReader(arrayReader(readCount))), parts: fields.get('parts', choiceReader(KV_PARTS)) };
};

function settingsFields(value: unknown, path: string): Omit<EvalSettings, 'text'> & { fields: ReturnType<typeof readObject> } {
  const fields = readObject(value, path);
  return {
    fields,
    model: fields.get('model', readString),
    ...withOptional('onnxFile', fields.optional('onnxFile', readString)),
    executionProvider: fields.get('executionProvider', choiceReader(EXECUTION_PROVIDERS)),
    cacheMode: fields.get('cacheMode', choiceReader(['dynamic', 'quantized'] as const)),
    quantization: fields.get('quantization', readQuantizedCacheSettings),
    windows: fields.get('windows', readWindowSettings),
    ...withOptional('feed', fields.optional('feed', choiceReader(FEEDS))),
    ...withOptional('targets', fields.optional('targets', readLabTargets)),
    ...withOptional('dequantize', fields.optional('dequantize', choiceReader(DEQUANTIZE_PATHS))),
  };
}

export const readEvalSettings: Read<EvalSettings> = (value, path) => {
  const { fields, ...settings } = settingsFields(value, path);
  const text = readObject(fields.get('text', (v) => v), `${path}.text`);
  const tokenIds = text.optional('tokenIds', arrayReader(readCount));
  const file = text.optional('file', readTextFilePrefix);
  return {
    ...settings,
    text: { name: text.get('name', readString), content: text.get('content', readString), ...(tokenIds === undefined ? {} : { tokenIds }), ...(file === undefined ? {} : { file }) },
  };
};

export const readRecordedEvalSettings: Read<RecordedEvalSettings> = (value, path) => {
  const { fields, ...settings } = settingsFields(value, path);
  const text = readObject(fields.get('text', (v) => v), `${path}.text`);
  return { ...settings, text: { name: text.get('name', readString) } };
};

const readKld: Read<KldSummary> = (value, path) => {
  const f = readObject(value, path);
  const n = (key: string): number => f.get(key, readNumber);
  return { mean: n('mean'), meanError: n('meanError'), median: n('median'), p90: n('p90'), p95: n('p95'), p99: n('p99'), p999: n('p999'), max: n('max'), min: n('min') };
};

const readDeltaP: Read<DeltaPSummary> = (value, path) => {
  const f = readObject(value, path);
  const n = (key: string): number => f.get(key, readNumber);
  return { mean: n('mean'), meanError: n('meanError'), rms: n('rms'), rmsError: n('rmsError'), median: n('median'), p1: n('p1'), p99: n('p99'), min: n('min'), max: n('max') };
};

export const readEvalSummary: Read<EvalSummary> = (value, path) => {
  const f = readObject(value, path);
  const n = (key: string): number => f.get(key, readNumber);
  return {
    tokens: f.get('tokens', readCount),
    ppl: n('ppl'), pplError: n('pplError'), pplReference: n('pplReference'), pplReferenceError: n('pplReferenceError'),
    deltaPpl: n('deltaPpl'), deltaPplError: n('deltaPplError'), pplRatio: n('pplRatio'), pplRatioError: n('pplRatioError'),
    lnPplRatio: n('lnPplRatio'), lnPplRatioError: n('lnPplRatioError'), pplCorrelation: n('pplCorrelation'),
    kld: f.get('kld', readKld),
    top1Agreement: n('top1Agreement'), top1AgreementError: n('top1AgreementError'),
    deltaP: f.get('deltaP', readDeltaP),
  };
};

const readSideErrors: Read<SideErrorSummary> = (value, path) => {
  const f = readObject(value, path);
  return {
    relFroErrMean: f.get('relFroErrMean', readNumber), relFroErrMax: f.get('relFroErrMax', readNumber),
    meanAbsErrMean: f.get('meanAbsErrMean', readNumber), maxAbsErr: f.get('maxAbsErr', readNumber),
    snrDbMean: f.get('snrDbMean', nullableReader(readNumber)),
  };
};

const readLayerErrors: Read<LayerErrorSummary> = (value, path) => {
  const f = readObject(value, path);
  return { layer: f.get('layer', readCount), events: f.get('events', readCount), key: f.get('key', nullableReader(readSideErrors)), value: f.get('value', nullableReader(readSideErrors)) };
};

const readNumbers = arrayReader(readNumber);

export const readSessionCompute: Read<SessionCompute> = (value, path) => {
  const f = readObject(value, path);
  return { logitsRows: f.get('logitsRows', choiceReader(LOGITS_ROWS_MODES)), prepacked: f.get('prepacked', readBoolean) };
};

export const readEvalResult: Read<EvalResult> = (value, path) => {
  const f = readObject(value, path);
  const model = f.get('model', (v, p) => ({ ...readModelIdentity(v, p), contentSha256: readObject(v, p).get('contentSha256', readString) }));
  const text = readObject(f.get('text', (v) => v), `${path}.text`);
  const windows = f.get('windows', (v, p) => ({ ...readWindowSettings(v, p), count: readObject(v, p).get('count', readCount) }));
  const reference = readObject(f.get('reference', (v) => v), `${path}.reference`);
  const memory = readObject(f.get('memory', (v) => v), `${path}.memory`);
  const timings = readObject(f.get('timings', (v) => v), `${path}.timings`);
  const perToken = f.optional('perToken', (v, p) => {
    const t = readObject(v, p);
    return { nll: t.get('nll', readNumbers), nllReference: t.get('nllReference', readNumbers), kld: t.get('kld', readNumbers), deltaP: t.get('deltaP', readNumbers), top1: t.get('top1', readNumbers) };
  });
  return {
    settings: f.get('settings', readRecordedEvalSettings),
    model,
    text: {
      name: text.get('name', readString), sha256: text.get('sha256', readString), characters: text.get('characters', readCount), tokens: text.get('tokens', readCount),
      ...withOptional('tokenizedCharacters', text.optional('tokenizedCharacters', readCount)),
      ...withOptional('fileBytes', text.optional('fileBytes', readCount)),
      ...withOptional('tokenIds', text.optional('tokenIds', readBoolean)),
    },
    windows,
    executionProvider: f.get('executionProvider', choiceReader(EXECUTION_PROVIDERS)),
    ortVersion: f.get('ortVersion', readString),
    reference: {
      key: reference.get('key', readString), cached: reference.get('cached', readBoolean),
      ...withOptional('windowsComputed', reference.optional('windowsComputed', readCount)),
      ...withOptional('bytes', reference.optional('bytes', readCount)),
      ...withOptional('notes', reference.optional('notes', arrayReader(readString))),
    },
    summary: f.get('summary', readEvalSummary),
    perWindow: f.get('perWindow', arrayReader((v, p) => {
      const w = readObject(v, p);
      return { index: w.get('index', readCount), start: w.get('start', readCount), summary: w.get('summary', readEvalSummary) };
    })),
    memory: {
      storedBytes: memory.get('storedBytes', readCount), bitsPerValue: memory.get('bitsPerValue', readNumber),
      total: memory.get('total', readLayerMemory), perLayer: memory.get('perLayer', arrayReader(nullableReader(readLayerMemory))),
    },
    flushCounts: f.get('flushCounts', arrayReader(nullableReader(readCount))),
    layerErrors: f.get('layerErrors', arrayReader(readLayerErrors)),
    extensions: f.get('extensions', arrayReader(readString)),
    preflightDiagnostics: f.get('preflightDiagnostics', arrayReader(readDiagnostic)) as Diagnostic[],
    feed: f.get('feed', choiceReader(['chunked', 'token-by-token'] as const)),
    ...withOptional('dequantize', f.optional('dequantize', choiceReader(DEQUANTIZE_PATHS))),
    ...withOptional('dequantizeReason', f.optional('dequantizeReason', readString)),
    ...withOptional('session', f.optional('session', readSessionCompute)),
    timings: {
      loadMs: timings.get('loadMs', readNumber), referenceMs: timings.get('referenceMs', readNumber), evalMs: timings.get('evalMs', readNumber),
      runs: timings.get('runs', readCount), tokensFed: timings.get('tokensFed', readCount), tokensPerSecond: timings.get('tokensPerSecond', readNumber),
    },
    ...withOptional('perToken', perToken),
  };
};

