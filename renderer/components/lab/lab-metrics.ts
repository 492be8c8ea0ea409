import type { SweepRow } from '../../../app/lab/sweep-results.js';
import type { ParetoX, ParetoY } from '../../store/lab-slice.js';

type Measured = SweepRow & { readonly result: NonNullable<SweepRow['result']> };

export function isMeasured(row: SweepRow): row is Measured {
  return row.result !== null;
}

export const X_LABELS: Readonly<Record<ParetoX, string>> = { bits: 'KV bits per value', bytes: 'stored KV bytes at the window\'s end' };
export const Y_LABELS: Readonly<Record<ParetoY, string>> = { kld: 'mean KLD (nats)', 'delta-ppl': 'ΔPPL', 'top1-disagreement': 'top-1 disagreement' };

export function xOf(row: Measured, x: ParetoX): number {
  return x === 'bits' ? row.result.bitsPerValue : row.result.storedBytes;
}

export function yOf(row: Measured, y: ParetoY): number {
  if (y === 'kld') return row.result.kldMean;
  if (y === 'delta-ppl') return row.result.deltaPpl;
  return 1 - row.result.top1Agreement;
}

/**
 * The Pareto frontier of (cost x, loss y), both to minimize: the points no other point beats on
 * both, in order of x. Ties on x keep the lower y.
 */
export function paretoFrontier<T>(points: readonly T[], x: (p: T) => number, y: (p: T) => number): T[] {
  const sorted = [...points].sort((a, b) => x(a) - x(b) || y(a) - y(b));
  const frontier: T[] = [];
  let best = Infinity;
  for (const point of sorted) {
    if (y(point) < best) {
      frontier.push(point);
      best = y(point);
    }
  }
  return frontier;
}

/** A point's settings as a legend or tooltip says them: `hqq 4-bit g32 R128 axes 1/1` (plus the lab targets). */
export function pointLabel(row: SweepRow): string {
  const s = row.settings;
  // a point refused before its settings were read: its options in words, not its folder name
  if (s === null) return optionsLabel(row.options) || row.name;
  if (s.cacheMode === 'dynamic') return 'dynamic (full precision)';
  // a runtime's write-once format (issue 27): its formats, not transformers' backend settings it does not use
  const parts = s.kvFormatKey !== undefined
    ? [s.kvFormatKey === s.kvFormatValue ? s.kvFormatKey : `K ${s.kvFormatKey}, V ${s.kvFormatValue ?? ''}`]
    : [`${s.backend} ${s.nbits}-bit`, `g${s.groupSize}`, `R${s.residualLength}`, `axes ${s.axisKey}/${s.axisValue}`];
  if (s.layers !== 'all') parts.push(`layer ${s.layers}`);
  if (s.parts !== 'both') parts.push(`${s.parts === 'key' ? 'K' : 'V'} only`);
  const extra = Object.entries(row.options).filter(([key]) => !STANDARD_KEYS.has(key)).map(([key, value]) => `${key} ${String(value)}`);
  return [...parts, ...extra].join(' ');
}

/** A point's sweep options as `nbits 3 · group-size 7`, in the order the sweep gave them. */
export function optionsLabel(options: Readonly<Record<string, unknown>>): string {
  return Object.entries(options).map(([key, value]) => (value === true ? key : `${key} ${String(value)}`)).join(' · ');
}

/** The columns the results table shows at first: the metrics that fit beside the settings at 1280 px. */
export const DEFAULT_TABLE_COLUMNS: readonly string[] = ['index', 'settings', 'status', 'bits', 'kld', 'top1', 'delta-ppl'];

const STANDARD_KEYS = new Set(['backend', 'nbits', 'group-size', 'residual-length', 'axis-key', 'axis-value', 'quantize-layers', 'quantize-parts', 'ep', 'context', 'windows', 'cache', 'layer-policy']);

/** One cell of the layer × K/V sensitivity heatmap: mean KLD of quantizing only that layer's side(s). */
export interface HeatmapCell {
  readonly layer: number;
  readonly parts: 'key' | 'value' | 'both';
  readonly kld: number;
  readonly name: string;
}

/**
 * The heatmap's cells from a `layers` preset's rows: those that quantize one layer, grouped by the
 * other settings (say nbits 2 and 4), each group a heatmap of its own.
 */
export function heatmapGroups(rows: readonly SweepRow[]): Map<string, HeatmapCell[]> {
  const groups = new Map<string, HeatmapCell[]>();
  for (const row of rows) {
    if (!isMeasured(row) || row.settings === null) continue;
    const layer = Number(row.options['quantize-layers']);
    const parts = row.options['quantize-parts'];
    if (!Number.isInteger(layer) || (parts !== 'key' && parts !== 'value' && parts !== 'both')) continue;
    const rest = Object.entries(row.options).filter(([key]) => key !== 'quantize-layers' && key !== 'quantize-parts' && key !== 'ep' && key !== 'context' && key !== 'windows')
      .sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => `${key} ${String(value)}`).join(', ');
    const key = rest === '' ? 'all points' : rest;
    const cells = groups.get(key) ?? [];
    cells.push({ layer, parts, kld: row.result.kldMean, name: row.name });
    groups.set(key, cells);
  }
  return groups;
}

/** The results table's columns: llama.cpp's, plus the point's settings. */
export interface TableColumn {
  readonly id: string;
  readonly label: string;
  readonly title: string;
  readonly value: (row: SweepRow) => number | string | null;
  readonly format: (row: SweepRow) => string;
}

const num = (digits: number) => (value: number | undefined): string => (value === undefined ? '' : value.toFixed(digits));
const percent = (value: number | undefined): string => (value === undefined ? '' : `${(100 * value).toFixed(2)} %`);
const withError = (value: number | undefined, error: number | undefined, digits: number): string => (value === undefined ? '' : `${value.toFixed(digits)} ± ${(error ?? 0).toFixed(digits)}`);

export const TABLE_COLUMNS: readonly TableColumn[] = [
  { id: 'index', label: '#', title: 'point', value: (r) => r.index, format: (r) => String(r.index) },
  { id: 'settings', label: 'settings', title: 'the point\'s cache settings', value: (r) => pointLabel(r), format: (r) => pointLabel(r) },
  { id: 'status', label: 'status', title: 'measured, refused or failed', value: (r) => r.status, format: (r) => r.status },
  { id: 'bits', label: 'bits/value', title: 'KV bits per value (codes, scale/zero and residual)', value: (r) => r.result?.bitsPerValue ?? null, format: (r) => num(2)(r.result?.bitsPerValue) },
  { id: 'ppl', label: 'PPL', title: 'Mean PPL(Q) ± error', value: (r) => r.result?.ppl ?? null, format: (r) => withError(r.result?.ppl, r.result?.pplError, 4) },
  { id: 'delta-ppl', label: 'ΔPPL', title: 'Mean PPL(Q) − PPL(base) ± error', value: (r) => r.result?.deltaPpl ?? null, format: (r) => withError(r.result?.deltaPpl, r.result?.deltaPplError, 4) },
  { id: 'ppl-ratio', label: 'PPL ratio', title: 'Mean PPL(Q)/PPL(base)', value: (r) => r.result?.pplRatio ?? null, format: (r) => num(4)(r.result?.pplRatio) },
  { id: 'kld', label: 'KLD', title: 'Mean KLD ± error (nats)', value: (r) => r.result?.kldMean ?? null, format: (r) => withError(r.result?.kldMean, r.result?.kldMeanError, 6) },
  { id: 'kld-p99', label: 'KLD p99', title: '99.0% KLD', value: (r) => r.result?.kldP99 ?? null, format: (r) => num(5)(r.result?.kldP99) },
  { id: 'kld-max', label: 'KLD max', title: 'Maximum KLD', value: (r) => r.result?.kldMax ?? null, format: (r) => num(4)(r.result?.kldMax) },
  { id: 'top1', label: 'same top p', title: 'Same top p (top-1 agreement)', value: (r) => r.result?.top1Agreement ?? null, format: (r) => percent(r.result?.top1Agreement) },
  { id: 'dp-mean', label: 'mean Δp', title: 'Mean Δp', value: (r) => r.result?.deltaPMean ?? null, format: (r) => percent(r.result?.deltaPMean) },
  { id: 'dp-rms', label: 'RMS Δp', title: 'RMS Δp', value: (r) => r.result?.deltaPRms ?? null, format: (r) => percent(r.result?.deltaPRms) },
];

/** The rows a table shows: those matching every word of the filter (in settings, name, status or reason), sorted. */
export function tableRows(rows: readonly SweepRow[], filter: string, sortBy: string, descending: boolean): SweepRow[] {
  const words = filter.toLowerCase().split(/\s+/).filter((w) => w !== '');
  const column = TABLE_COLUMNS.find((c) => c.id === sortBy) ?? TABLE_COLUMNS[0]!;
  const matching = rows.filter((row) => {
    const text = `${pointLabel(row)} ${row.name} ${row.status} ${row.reason ?? ''}`.toLowerCase();
    return words.every((word) => text.includes(word));
  });
  return matching.sort((a, b) => {
    const va = column.value(a);
    const vb = column.value(b);
    if (va === null && vb === null) return a.index - b.index;
    if (va === null) return 1;
    if (vb === null) return -1;
    const order = typeof va === 'number' && typeof vb === 'number' ? va - vb : String(va).localeCompare(String(vb));
    return (descending ? -order : order) || a.index - b.index;
  });
}
