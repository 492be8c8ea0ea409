import type { RunSummary } from '../../../app/protocol/workbench-api.js';
import { formatBytes, formatError, formatPercent, formatTokensPerSecond } from '../../format/units.js';

/**
 * History's columns, as W&B's runs table and TensorBoard's HParams table show them: each run's
 * settings and key figures side by side, sortable and filterable. `sortValue` orders (numbers
 * numerically, null last); `text` is what the cell and the filter read.
 */
export interface HistoryColumn {
  readonly id: string;
  readonly label: string;
  /** the header's tooltip: what the figure is, in which unit */
  readonly title: string;
  readonly numeric: boolean;
  sortValue(run: RunSummary): number | string | null;
  text(run: RunSummary): string;
}

const DASH = '—';
const quantizedOnly = (run: RunSummary, value: number | null | undefined): number | null => (run.cacheMode === 'quantized' && typeof value === 'number' ? value : null);

export const HISTORY_COLUMNS: readonly HistoryColumn[] = [
  { id: 'finished', label: 'Finished', title: 'when the run ended (its id on hover)', numeric: false, sortValue: (r) => r.createdAt, text: (r) => new Date(r.createdAt).toLocaleString() },
  { id: 'model', label: 'Model', title: 'the model folder', numeric: false, sortValue: (r) => r.modelName, text: (r) => r.modelName },
  { id: 'cache', label: 'Cache', title: 'backend and bits, or a runtime\'s KV format (dynamic: full precision)', numeric: false, sortValue: (r) => cacheText(r), text: cacheText },
  { id: 'group', label: 'Group', title: 'group size', numeric: true, sortValue: (r) => quantizedOnly(r, r.groupSize), text: (r) => numberText(quantizedOnly(r, r.groupSize)) },
  { id: 'residual', label: 'Residual', title: 'residual length (tokens kept in full precision before a flush)', numeric: true, sortValue: (r) => quantizedOnly(r, r.residualLength), text: (r) => numberText(quantizedOnly(r, r.residualLength)) },
  { id: 'axes', label: 'Axes K/V', title: 'quantization axis of keys / values', numeric: false, sortValue: (r) => axesText(r), text: axesText },
  { id: 'path', label: 'Path', title: 'where the cache was dequantized: in the graph or on the host (the path that ran)', numeric: false, sortValue: (r) => r.dequantize ?? null, text: (r) => r.dequantize ?? DASH },
  { id: 'bits', label: 'Bits/value', title: 'stored bits per cached value at the end: codes, scales/zeros and the residual', numeric: true, sortValue: (r) => r.bitsPerValue ?? null, text: (r) => (r.bitsPerValue === undefined ? DASH : r.bitsPerValue.toFixed(2)) },
  { id: 'kl', label: 'Mean KL', title: 'mean KL(reference ‖ run) in nats, from the reference lane', numeric: true, sortValue: (r) => r.meanKl ?? null, text: (r) => (r.meanKl == null ? DASH : formatError(r.meanKl)) },
  { id: 'top1', label: 'Top-1', title: 'share of steps whose argmax agrees with the reference', numeric: true, sortValue: (r) => r.top1Agreement ?? null, text: (r) => (r.top1Agreement == null ? DASH : formatPercent(r.top1Agreement)) },
  { id: 'speed', label: 'tok/s', title: 'decode tokens per second', numeric: true, sortValue: (r) => r.decodeTokensPerSecond, text: (r) => formatTokensPerSecond(r.decodeTokensPerSecond) },
  { id: 'kv', label: 'KV stored', title: 'KV-cache bytes stored at the end', numeric: true, sortValue: (r) => r.totalKvBytes, text: (r) => formatBytes(r.totalKvBytes) },
  { id: 'tokens', label: 'Tokens', title: 'tokens generated', numeric: true, sortValue: (r) => r.tokens, text: (r) => String(r.tokens) },
  { id: 'ep', label: 'EP', title: 'ONNX Runtime execution provider', numeric: false, sortValue: (r) => r.executionProvider, text: (r) => r.executionProvider },
  { id: 'stop', label: 'Stop', title: 'why generation stopped', numeric: false, sortValue: (r) => r.stopReason, text: (r) => r.stopReason },
];

/**
 * The columns shown until the user chooses others (History's "Columns" menu): the settings and figures
 * issue 25 names, so that with the pinned actions they fit beside the Run panel at 1280 px; tokens,
 * execution provider and stop reason are a tick away (and the filter reads them either way).
 */
export const DEFAULT_HISTORY_COLUMNS: readonly string[] = HISTORY_COLUMNS.map((column) => column.id).filter((id) => id !== 'tokens' && id !== 'ep' && id !== 'stop');

function cacheText(run: RunSummary): string {
  if (run.cacheMode === 'dynamic') return 'dynamic';
  // the runtime's format is the cache; its being a kvscope extension is said by the format itself
  if (run.kvFormat !== undefined) return run.kvFormat;
  const extended = run.extensions !== undefined && run.extensions.length > 0 ? ' +ext' : '';
  return `${run.backend ?? '?'} ${run.nbits ?? '?'}-bit${extended}`;
}

function axesText(run: RunSummary): string {
  const key = quantizedOnly(run, run.axisKey);
  const value = quantizedOnly(run, run.axisValue);
  return key === null || value === null ? DASH : `${key}/${value}`;
}

function numberText(value: number | null): string {
  return value === null ? DASH : String(value);
}

export interface HistorySort {
  readonly column: string;
  readonly descending: boolean;
}

/** Newest first, as the host lists them. */
export const DEFAULT_HISTORY_SORT: HistorySort = { column: 'finished', descending: true };

/** The runs in the column's order; runs without a value (a dynamic cache's group size) go last either way. */
export function sortRuns(runs: readonly RunSummary[], sort: HistorySort): RunSummary[] {
  const column = HISTORY_COLUMNS.find((c) => c.id === sort.column);
  if (column === undefined) return [...runs];
  const sign = sort.descending ? -1 : 1;
  return [...runs].sort((a, b) => {
    const x = column.sortValue(a);
    const y = column.sortValue(b);
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    if (typeof x === 'number' && typeof y === 'number') return sign * (x - y);
    return sign * String(x).localeCompare(String(y), undefined, { numeric: true });
  });
}

/**
 * The runs whose cells contain every word of the query (case-insensitive), over the columns shown
 * and the run id, so "hqq graph" keeps HQQ runs that ran in the graph.
 */
export function filterRuns(runs: readonly RunSummary[], query: string): RunSummary[] {
  const words = query.toLowerCase().split(/\s+/).filter((word) => word !== '');
  if (words.length === 0) return [...runs];
  return runs.filter((run) => {
    const haystack = [run.id, ...HISTORY_COLUMNS.map((column) => column.text(run)), ...(run.extensions ?? [])].join(' ').toLowerCase();
    return words.every((word) => haystack.includes(word));
  });
}
