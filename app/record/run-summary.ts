import type { RunSummary } from '../protocol/workbench-api.js';
import { SYNTHETIC_MODEL_KINDS } from '../synthetic/synthetic-spec.js';
import { kvFormatText } from './kv-format-text.js';
import type { RunRecord } from './run-record.js';

/** One line of the run history: what ran, how fast, and what its cache cost against the fp16 baseline. */
export function summarizeRun(record: RunRecord): RunSummary {
  const quantized = record.settings.cacheMode === 'quantized';
  // A runtime's write-once format (a kvscope extension) is the cache: transformers' backend, bits,
  // group, residual and axes did not shape it, so History shows the format in their place.
  const kvFormat = quantized ? kvFormatText(record.settings.quantization) : null;
  // a layer map's own formats leave the other layers transformers': their backend and bits stay shown
  const transformers = quantized && (kvFormat === null || record.settings.quantization.extensions?.kvFormatKey === undefined);
  return {
    id: record.id,
    createdAt: record.createdAt,
    modelName: modelName(record),
    cacheMode: record.settings.cacheMode,
    backend: transformers ? String(record.settings.quantization.backend) : null,
    nbits: transformers ? record.settings.quantization.nbits : null,
    ...(kvFormat !== null ? { kvFormat } : {}),
    executionProvider: record.executionProvider,
    tokens: record.generatedTokenIds.length,
    decodeTokensPerSecond: record.timings.decodeTokensPerSecond,
    totalKvBytes: record.kvBytesTotal.totalBytes,
    fp16BaselineBytes: record.kvBytesTotal.fp16BaselineBytes,
    dtypeBaselineBytes: record.model.kvDtype === 'float16' ? record.kvBytesTotal.fp16BaselineBytes : record.kvBytesTotal.fp32BaselineBytes,
    kvDtype: record.model.kvDtype,
    stopReason: record.stopReason,
    groupSize: transformers ? record.settings.quantization.groupSize : null,
    residualLength: transformers ? record.settings.quantization.residualLength : null,
    axisKey: transformers ? record.settings.quantization.axisKey : null,
    axisValue: transformers ? record.settings.quantization.axisValue : null,
    ...(record.dequantize !== undefined ? { dequantize: record.dequantize } : {}),
    ...(bitsPerValue(record) !== null ? { bitsPerValue: bitsPerValue(record)! } : {}),
    meanKl: record.reference?.meanKl ?? null,
    top1Agreement: record.reference?.top1Agreement ?? null,
    extensions: (record.extensions ?? []).map((extension) => extension.label),
  };
}

/**
 * Stored bits per cached value at the end of the run: every stored byte (codes, scales/zeros, the
 * full-precision residual) over the values cached, counted from the fp16 baseline (2 bytes a value).
 * Null when nothing was cached.
 */
export function bitsPerValue(record: Pick<RunRecord, 'kvBytesTotal'>): number | null {
  const values = record.kvBytesTotal.fp16BaselineBytes / 2;
  return values > 0 ? (record.kvBytesTotal.totalBytes * 8) / values : null;
}

/** `synthetic` for the built-in models (their folder is a cache path nobody chose), else the folder's name. */
export function modelName(record: RunRecord): string {
  const model = record.settings.model;
  if ((SYNTHETIC_MODEL_KINDS as readonly string[]).includes(model)) return model;
  const parts = record.model.folder.split(/[\\/]/).filter((part) => part.length > 0);
  return parts.at(-1) ?? record.model.folder;
}

