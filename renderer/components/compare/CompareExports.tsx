import type { ReactNode } from 'react';
import { csvText } from '../../../app/record/csv.js';
import type { RunRecord } from '../../../app/record/run-record.js';
import { runLetter } from '../../charts/compare-charts.js';
import { latexTable } from '../../export/latex-table.js';
import { downloadText } from '../../platform/download.js';
import { COMPARE_ROWS } from './compare-rows.js';

/**
 * The comparison as a table for a paper: one row per run (A, B, …), one column per figure, as CSV
 * (numbers unformatted: bytes, tok/s, nats, shares) and as a LaTeX booktabs table (the shown text).
 */
export function CompareExports({ records }: { records: readonly RunRecord[] }): ReactNode {
  const name = `kvscope-compare-${records.map((r) => r.id).join('-vs-')}`.slice(0, 180);
  return (
    <div className="button-row">
      <button type="button" onClick={() => downloadText(`${name}.csv`, 'text/csv;charset=utf-8', compareCsv(records))} data-testid="compare-export-csv">CSV</button>
      <button type="button" onClick={() => downloadText(`${name}.tex`, 'application/x-tex', compareLatex(records))} data-testid="compare-export-latex">LaTeX</button>
    </div>
  );
}

export function compareCsv(records: readonly RunRecord[]): string {
  const header = ['letter', ...COMPARE_ROWS.map((row) => row.id)];
  return csvText([header, ...records.map((record, index) => [runLetter(index), ...COMPARE_ROWS.map((row) => (row.number !== undefined ? row.number(record) : row.value(record)))])]);
}

export function compareLatex(records: readonly RunRecord[]): string {
  const rows = COMPARE_ROWS.filter((row) => row.id !== 'run' && row.id !== 'prompt' && row.id !== 'flushes');
  return latexTable({
    caption: `kvscope: ${records.length} runs compared (${records.map((r, i) => `${runLetter(i)} = ${r.id}`).join(', ')})`,
    label: `tab:kvscope-compare-${records[0]?.id ?? ''}`,
    headers: ['Run', ...rows.map((row) => row.label)],
    numeric: [false, ...rows.map((row) => row.number !== undefined)],
    rows: records.map((record, index) => [runLetter(index), ...rows.map((row) => row.value(record))]),
  });
}
