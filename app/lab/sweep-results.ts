import { layerMapFormats, layerUsesRuntimeFormat, usesRuntimeFormat, type CacheExtensions } from '../cache/cache-extensions.js';
import { bytesPerElement } from '../tensor/kv-tensor.js';
import { runtimeFormat } from '../quant/runtime-formats/registry.js';
import { csvText, type CsvCell } from '../record/csv.js';
import type { EvalResult } from './eval-result.js';
import type { SweepValue } from './sweep-spec.js';
import type { RunErrorPayload } from '../protocol/messages.js';
import type { RetrievalMapJson, RetrievalPointRecord } from './sweep-folder.js';

/** How a point ended: measured, refused by the preflight or the model checks, or failed. */
export type PointStatus = 'ok' | 'refused' | 'failed';

/** One row of results.json / results.csv: the point's settings, its summary and its memory. */
export interface SweepRow {
  readonly index: number;
  readonly name: string;
  readonly status: PointStatus;
  /** why a point was refused or failed (its message), null when it was measured */
  readonly reason: string | null;
  readonly options: Readonly<Record<string, SweepValue>>;
  readonly settings: {
    readonly cacheMode: string;
    readonly backend: string;
    readonly nbits: number;
    readonly axisKey: number;
    readonly axisValue: number;
    readonly groupSize: number;
    readonly residualLength: number;
    readonly layers: string;
    readonly parts: string;
    /** quantized caches: where the cache was dequantized (`graph` or `host`, what ran); absent for dynamic */
    readonly dequantize?: string;
    /** how the point's session computed (EvalResult.session: `logitsRows`, `prepacked`); absent in older results */
    readonly logitsRows?: string;
    readonly prepacked?: boolean;
    /**
     * whose cache it is: `transformers` (its QuantizedCache, or the dynamic cache), or the serving runtime
     * whose write-once format the point ran (issue 27: `llama.cpp`, `vLLM, SGLang`, …); absent in older results
     */
    readonly family?: string;
    /** runtime formats only (a kvscope extension): the keys' and values' formats; the backend's columns do not apply */
    readonly kvFormatKey?: string;
    readonly kvFormatValue?: string;
  } | null;
  readonly result: {
    readonly tokens: number;
    readonly ppl: number;
    readonly pplError: number;
    readonly pplReference: number;
    readonly pplReferenceError: number;
    readonly deltaPpl: number;
    readonly deltaPplError: number;
    readonly pplRatio: number;
    readonly pplRatioError: number;
    readonly kldMean: number;
    readonly kldMeanError: number;
    readonly kldMedian: number;
    readonly kldP99: number;
    readonly kldP999: number;
    readonly kldMax: number;
    readonly top1Agreement: number;
    readonly top1AgreementError: number;
    readonly deltaPMean: number;
    readonly deltaPMeanError: number;
    readonly deltaPRms: number;
    readonly deltaPRmsError: number;
    readonly bitsPerValue: number;
    /**
     * runtime formats only: bits per value as the runtimes count them, a row's bytes · 8 / head_dim, K and V
     * averaged over the values they hold (q4_0: 4.5, NVFP4: 4.5, fp8: 8; per-tensor scales left out)
     */
    readonly formatBitsPerValue?: number;
    readonly storedBytes: number;
    readonly fp16BaselineBytes: number;
  } | null;
  /** a retrieval point's figures (a spec with a task, app/cli/sweep-retrieval.ts); absent for the text evaluation's points */
  readonly retrieval?: RetrievalRow;
}

/** A retrieval point in the table: its accuracies and its depth × length maps. */
export interface RetrievalRow {
  readonly task: string;
  readonly metric: string;
  /** mean score over every sample of the point */
  readonly accuracy: number;
  /** the full-precision dynamic cache's mean score on the same prompts (the point's own when it is the dynamic cache) */
  readonly accuracyReference: number;
  readonly samples: number;
  /** the chosen cache's stored bytes at the end of a run at the longest length (the mean over its samples) */
  readonly kvBytesLongest: number;
  readonly map: RetrievalMapJson;
  /** the dynamic cache's map (equal to `map` when the point is the dynamic cache) */
  readonly referenceMap: RetrievalMapJson;
}

/** The derived tables of a sweep folder (results.json): never the source of truth, always rebuilt from the point folders. */
export interface SweepResults {
  readonly format: 'kvscope-sweep-results';
  readonly version: 1;
  /** sha256 of the spec as expanded (sweep-folder.ts): shards of one sweep share it */
  readonly specSha256: string;
  /** points of the whole sweep (all shards) */
  readonly points: number;
  readonly rows: readonly SweepRow[];
}

export function rowFromResult(index: number, name: string, options: Readonly<Record<string, SweepValue>>, result: EvalResult): SweepRow {
  const s = result.summary;
  const settings = result.settings;
  const q = settings.quantization;
  return {
    index, name, status: 'ok', reason: null, options,
    settings: {
      cacheMode: settings.cacheMode, backend: String(q.backend), nbits: q.nbits, axisKey: q.axisKey, axisValue: q.axisValue, groupSize: q.groupSize,
      residualLength: q.residualLength,
      layers: settings.targets?.layers === null || settings.targets === undefined ? 'all' : settings.targets.layers.join(' '),
      parts: settings.targets?.parts ?? 'both',
      ...(result.dequantize === undefined ? {} : { dequantize: result.dequantize }),
      ...(result.session === undefined ? {} : { logitsRows: result.session.logitsRows, prepacked: result.session.prepacked }),
      ...formatSettings(q.extensions),
    },
    result: {
      tokens: s.tokens, ppl: s.ppl, pplError: s.pplError, pplReference: s.pplReference, pplReferenceError: s.pplReferenceError,
      deltaPpl: s.deltaPpl, deltaPplError: s.deltaPplError, pplRatio: s.pplRatio, pplRatioError: s.pplRatioError,
      kldMean: s.kld.mean, kldMeanError: s.kld.meanError, kldMedian: s.kld.median, kldP99: s.kld.p99, kldP999: s.kld.p999, kldMax: s.kld.max,
      top1Agreement: s.top1Agreement, top1AgreementError: s.top1AgreementError,
      deltaPMean: s.deltaP.mean, deltaPMeanError: s.deltaP.meanError, deltaPRms: s.deltaP.rms, deltaPRmsError: s.deltaP.rmsError,
      bitsPerValue: result.memory.bitsPerValue, storedBytes: result.memory.storedBytes, fp16BaselineBytes: result.memory.total.fp16BaselineBytes,
      ...withFormatBits(settings.cacheMode === 'quantized' ? formatBitsPerValue(result) : null),
    },
  };
}

/**
 * The family and formats of a point's cache (a runtime's write-once format, or transformers'); a layer
 * map's own formats beside transformers' layers make a family of both (`transformers + llama.cpp`),
 * which the Pareto plot marks apart.
 */
export function formatSettings(extensions: CacheExtensions | undefined): { family: string; kvFormatKey?: string; kvFormatValue?: string } {
  const key = extensions?.kvFormatKey;
  const value = extensions?.kvFormatValue;
  if (key === undefined || value === undefined) {
    const mapped = layerMapFormats(extensions);
    return { family: ['transformers', ...new Set(mapped.map((name) => runtimeFormat(name).runtime))].join(' + ') };
  }
  const runtimes = [...new Set([runtimeFormat(key).runtime, runtimeFormat(value).runtime])];
  return { family: runtimes.join(' + '), kvFormatKey: key, kvFormatValue: value };
}

/**
 * The runtime formats' sides as the runtimes count them (`--kv-format`, or a layer map's
 * `format_key`/`format_value`): 8 · their rows' bytes (codeBytes, block scales included) / the values
 * they hold, over every layer that keeps a side in a format; the per-tensor scales (metadataBytes) are
 * per layer, not per value. A format layer's `full` side (its fullPrecisionBytes: a write-once layer
 * has no residual) and transformers' layers are not the formats' and are left out. Null where no side
 * is in a runtime format.
 */
export function formatBitsPerValue(result: Pick<EvalResult, 'settings' | 'memory' | 'model'>): number | null {
  const quantization = result.settings.quantization;
  if (!usesRuntimeFormat(quantization)) return null;
  let bytes = 0;
  let values = 0;
  result.memory.perLayer.forEach((memory, layer) => {
    if (memory === null || !layerUsesRuntimeFormat(quantization, layer)) return;
    bytes += memory.codeBytes;
    values += memory.valueCount - memory.fullPrecisionBytes / bytesPerElement(result.model.kvDtype);
  });
  return values > 0 ? (8 * bytes) / values : null;
}

function withFormatBits(bits: number | null): { formatBitsPerValue?: number } {
  return bits === null ? {} : { formatBitsPerValue: bits };
}

export function rowFromRetrieval(index: number, name: string, options: Readonly<Record<string, SweepValue>>, record: RetrievalPointRecord): SweepRow {
  const q = record.quantization;
  const samples = record.samples;
  const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
  const longest = Math.max(...samples.map((sample) => sample.length));
  return {
    index, name, status: 'ok', reason: null, options,
    settings: {
      cacheMode: record.cache, backend: q === null ? 'none' : String(q.backend), nbits: q?.nbits ?? 16, axisKey: q?.axisKey ?? 0, axisValue: q?.axisValue ?? 0,
      groupSize: q?.groupSize ?? 0, residualLength: q?.residualLength ?? 0, layers: 'all', parts: 'both',
    },
    result: null,
    retrieval: {
      task: record.task, metric: record.metric, samples: samples.length,
      accuracy: mean(samples.map((sample) => sample.score)),
      // the dynamic cache's own point has no reference beside it: it is the reference
      accuracyReference: mean(samples.map((sample) => sample.referenceScore ?? sample.score)),
      kvBytesLongest: mean(samples.filter((sample) => sample.length === longest).map((sample) => sample.kvBytes)),
      map: record.map, referenceMap: record.referenceMap ?? record.map,
    },
  };
}

export function failedRow(index: number, name: string, options: Readonly<Record<string, SweepValue>>, status: Exclude<PointStatus, 'ok'>, reason: string): SweepRow {
  return { index, name, status, reason, options, settings: null, result: null };
}

/**
 * A refusal's whole reason: the preflight's message lists its findings on the lines after the first,
 * and the fix may stand apart; cutting at the first line left "the preflight refuses them:" and nothing.
 */
export function fullReason(error: RunErrorPayload): string {
  const fix = error.fix === undefined || error.fix === '' || error.message.includes(error.fix) ? '' : `\nfix: ${error.fix}`;
  return error.message + fix;
}

const RESULT_COLUMNS: readonly (readonly [string, (r: NonNullable<SweepRow['result']>) => number | null])[] = [
  ['tokens', (r) => r.tokens], ['ppl', (r) => r.ppl], ['ppl_err', (r) => r.pplError], ['ppl_base', (r) => r.pplReference],
  ['ppl_base_err', (r) => r.pplReferenceError], ['delta_ppl', (r) => r.deltaPpl], ['delta_ppl_err', (r) => r.deltaPplError],
  ['ppl_ratio', (r) => r.pplRatio], ['ppl_ratio_err', (r) => r.pplRatioError], ['kld_mean', (r) => r.kldMean], ['kld_err', (r) => r.kldMeanError],
  ['kld_median', (r) => r.kldMedian], ['kld_p99', (r) => r.kldP99], ['kld_p99_9', (r) => r.kldP999], ['kld_max', (r) => r.kldMax],
  ['same_top_p', (r) => r.top1Agreement], ['same_top_p_err', (r) => r.top1AgreementError], ['mean_dp', (r) => r.deltaPMean],
  ['mean_dp_err', (r) => r.deltaPMeanError], ['rms_dp', (r) => r.deltaPRms], ['rms_dp_err', (r) => r.deltaPRmsError],
  ['bits_per_value', (r) => r.bitsPerValue], ['format_bits_per_value', (r) => r.formatBitsPerValue ?? null], ['stored_bytes', (r) => r.storedBytes],
  ['fp16_bytes', (r) => r.fp16BaselineBytes],
];

/** A runtime format's point leaves transformers' backend columns empty: they configure a cache it does not use. */
const backendOnly = (read: (s: NonNullable<SweepRow['settings']>) => CsvCell) => (s: NonNullable<SweepRow['settings']>): CsvCell => (s.kvFormatKey === undefined ? read(s) : null);

const SETTING_COLUMNS: readonly (readonly [string, (s: NonNullable<SweepRow['settings']>) => CsvCell])[] = [
  ['cache', (s) => s.cacheMode], ['family', (s) => s.family ?? null], ['kv_format_key', (s) => s.kvFormatKey ?? null], ['kv_format_value', (s) => s.kvFormatValue ?? null],
  ['backend', backendOnly((s) => s.backend)], ['nbits', backendOnly((s) => s.nbits)], ['axis_key', backendOnly((s) => s.axisKey)], ['axis_value', backendOnly((s) => s.axisValue)],
  ['group_size', backendOnly((s) => s.groupSize)], ['residual_length', backendOnly((s) => s.residualLength)], ['quantized_layers', (s) => s.layers], ['quantized_parts', (s) => s.parts],
  ['dequantize', (s) => s.dequantize ?? null], ['logits_rows', (s) => s.logitsRows ?? null], ['prepacked', (s) => s.prepacked ?? null],
];

const RETRIEVAL_COLUMNS: readonly (readonly [string, (r: RetrievalRow) => CsvCell])[] = [
  ['task', (r) => r.task], ['accuracy', (r) => r.accuracy], ['accuracy_base', (r) => r.accuracyReference], ['samples', (r) => r.samples],
  ['kv_bytes_longest', (r) => r.kvBytesLongest],
];

/**
 * results.csv: one row per point; the swept keys first (as given, `opt_` + the option name with `_`
 * for `-`, so they never clash with the resolved settings' columns), then the resolved settings,
 * then llama.cpp's figures; a retrieval sweep has its own
 * columns instead (task, accuracy, accuracy_base, samples, kv_bytes_longest; the maps are in results.json).
 */
export function sweepResultsCsv(results: SweepResults): string {
  const keys = [...new Set(results.rows.flatMap((row) => Object.keys(row.options)))].sort();
  // a retrieval sweep's points have no perplexity figures: its own columns replace llama.cpp's
  const isRetrieval = results.rows.some((row) => row.retrieval !== undefined);
  const retrieval = isRetrieval ? RETRIEVAL_COLUMNS : [];
  const measured = isRetrieval ? [] : RESULT_COLUMNS;
  const header: CsvCell[] = [
    'index', 'name', 'status', 'reason', ...keys.map((key) => `opt_${key.replace(/-/g, '_')}`), ...SETTING_COLUMNS.map(([name]) => name),
    ...measured.map(([name]) => name), ...retrieval.map(([name]) => name),
  ];
  const rows: CsvCell[][] = results.rows.map((row) => [
    row.index, row.name, row.status, row.reason,
    ...keys.map((key) => row.options[key] ?? null),
    ...SETTING_COLUMNS.map(([, read]) => (row.settings === null ? null : read(row.settings))),
    ...measured.map(([, read]) => (row.result === null ? null : read(row.result))),
    ...retrieval.map(([, read]) => (row.retrieval === undefined ? null : read(row.retrieval))),
  ]);
  return csvText([header, ...rows]);
}
