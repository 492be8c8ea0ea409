import { csvText } from '../../../app/record/csv.js';
import type { SweepRow } from '../../../app/lab/sweep-results.js';
import type { ChartIdentity } from '../../export/chart-png.js';
import { latexTable } from '../../export/latex-table.js';
import { pointLabel } from './lab-metrics.js';

/** The figures a paper's table of sweep points reports, unformatted for CSV, rounded for LaTeX. */
const COLUMNS: readonly { id: string; label: string; value: (row: SweepRow) => number | null; digits: number }[] = [
  { id: 'bits_per_value', label: 'bits/value', value: (r) => r.result?.bitsPerValue ?? null, digits: 2 },
  { id: 'ppl', label: 'PPL', value: (r) => r.result?.ppl ?? null, digits: 4 },
  { id: 'delta_ppl', label: 'ΔPPL', value: (r) => r.result?.deltaPpl ?? null, digits: 4 },
  { id: 'kld_mean', label: 'mean KLD', value: (r) => r.result?.kldMean ?? null, digits: 6 },
  { id: 'kld_p99', label: 'KLD p99', value: (r) => r.result?.kldP99 ?? null, digits: 5 },
  { id: 'same_top_p', label: 'same top p (%)', value: (r) => (r.result === null ? null : 100 * r.result.top1Agreement), digits: 2 },
];

/** The points as CSV: index, settings, status, reason, then the figures at full precision. */
export function pointsCsv(rows: readonly SweepRow[]): string {
  return csvText([
    ['index', 'settings', 'status', 'reason', ...COLUMNS.map((c) => c.id)],
    ...rows.map((row) => [row.index, pointLabel(row), row.status, row.reason, ...COLUMNS.map((c) => c.value(row))]),
  ]);
}

/** The points as a booktabs table (refused or failed points keep their row, figures as --). */
export function pointsLatex(rows: readonly SweepRow[], identity: ChartIdentity): string {
  return latexTable({
    caption: `kvscope ${identity.runId} on ${identity.model}${identity.settings === '' ? '' : ` (${identity.settings})`}`,
    label: `tab:kvscope-${identity.runId}`,
    headers: ['#', 'settings', ...COLUMNS.map((c) => c.label)],
    numeric: [true, false, ...COLUMNS.map(() => true)],
    rows: rows.map((row) => [row.index, pointLabel(row), ...COLUMNS.map((c) => rounded(c.value(row), c.digits))]),
  });
}

function rounded(value: number | null, digits: number): string | null {
  return value === null ? null : value.toFixed(digits);
}
