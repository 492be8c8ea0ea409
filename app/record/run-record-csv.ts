import { formatActiveExtensions } from '../cache/active-extensions.js';
import type { LayerMemory } from '../cache/layer-memory.js';
import type { FlushMetrics, StepMetrics } from '../engine/types.js';
import { csvText, type CsvCell } from './csv.js';
import type { RunRecord } from './run-record.js';

/**
 * The CSV export: one row per step (step 0 = prefill), for a spreadsheet or pandas. Byte columns sum
 * every layer's cache; error columns summarize the quantize events (prefill quantize and flushes)
 * of that step and stay empty on steps without one; reference columns stay empty without
 * `--reference`. docs/run-record.md lists the columns and their units.
 */
export const RUN_CSV_COLUMNS = [
  'step', 'token_id', 'seq_length',
  'dequantize_ms', 'model_ms', 'quantize_ms', 'reference_ms', 'total_ms', 'tokens_per_second',
  'kv_code_bytes', 'kv_metadata_bytes', 'kv_full_precision_bytes', 'kv_total_bytes', 'kv_fp16_baseline_bytes', 'kv_fp32_baseline_bytes',
  'kv_working_bytes', 'materialized_kv_bytes', 'rss_bytes',
  'quantize_events', 'flushes', 'key_rel_fro_err_mean', 'key_rel_fro_err_max', 'value_rel_fro_err_mean', 'value_rel_fro_err_max',
  'kl_divergence', 'top1_agrees', 'reference_token_id',
  'kvscope_extensions', 'dequantize_path',
] as const;

/**
 * The CSV of a run; `dequantize` (the path that ran) fills the last column and `extensions` (the record's, app/cache/active-extensions.ts) fills the one before it
 * on every row, so a table cut from it or joined with other runs still says which rows are not
 * transformers' QuantizedCache. Empty for a transformers run.
 */
export function runRecordToCsv(record: Pick<RunRecord, 'steps'> & Pick<Partial<RunRecord>, 'extensions' | 'dequantize'>): string {
  const extensions = formatActiveExtensions(record.extensions ?? []);
  // where the cache was dequantized, on every row like the extensions: empty for a dynamic cache
  const path = record.dequantize ?? null;
  return csvText([RUN_CSV_COLUMNS, ...record.steps.map((step) => [...stepRow(step), extensions, path])]);
}

function stepRow(step: StepMetrics): CsvCell[] {
  const kv = sumLayers(step.kvBytes);
  const key = relErrors(step.flushes, 'key');
  const value = relErrors(step.flushes, 'value');
  const cells: CsvCell[] = [
    step.step, step.tokenId, step.seqLength,
    // reference_ms is part of total_ms (empty without the lane), so the parts add up to the step
    step.timings.dequantizeMs, step.timings.modelMs, step.timings.quantizeMs, step.timings.referenceMs ?? null, step.timings.totalMs, step.tokensPerSecond,
    kv.codeBytes, kv.metadataBytes, kv.fullPrecisionBytes, kv.totalBytes, kv.fp16BaselineBytes, kv.fp32BaselineBytes,
    kv.workingBytes, step.materializedKvBytes, step.memory.rssBytes,
    step.flushes.length, step.flushes.filter((f) => f.kind === 'flush').length, key.mean, key.max, value.mean, value.max,
    step.reference?.klDivergence ?? null, step.reference?.top1Agrees ?? null, step.reference?.referenceTokenId ?? null,
  ];
  return cells;
}

type ByteColumns = Pick<LayerMemory, 'codeBytes' | 'metadataBytes' | 'fullPrecisionBytes' | 'totalBytes' | 'fp16BaselineBytes' | 'fp32BaselineBytes' | 'workingBytes'>;

function sumLayers(layers: readonly (LayerMemory | null)[]): ByteColumns {
  const sum = { codeBytes: 0, metadataBytes: 0, fullPrecisionBytes: 0, totalBytes: 0, fp16BaselineBytes: 0, fp32BaselineBytes: 0, workingBytes: 0 };
  for (const layer of layers) {
    if (layer === null) continue;
    for (const key of Object.keys(sum) as (keyof ByteColumns)[]) sum[key] += layer[key];
  }
  return sum;
}

function relErrors(events: readonly FlushMetrics[], side: 'key' | 'value'): { mean: number | null; max: number | null } {
  if (events.length === 0) return { mean: null, max: null };
  let total = 0;
  let max = -Infinity;
  for (const event of events) {
    const error = event[side].relFroErr;
    total += error;
    if (error > max) max = error;
  }
  return { mean: total / events.length, max };
}
