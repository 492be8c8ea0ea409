import { useMemo, useRef, type ReactNode } from 'react';
import type { ChartInstance } from '../../charts/echarts-core.js';
import { downloadText } from '../../platform/download.js';
import { FigureExports } from '../common/FigureExports.js';
import { pointsCsv, pointsLatex } from './points-table.js';
import { sweepIdentity } from './sweep-identity.js';
import { useChartTheme, useServices, useWorkbench } from '../../services.js';
import { compareOption } from './lab-charts.js';
import { pointLabel } from './lab-metrics.js';
import { LabChart } from './LabChart.js';

/** The points ticked in the table, side by side: their figures, and their mean KLD per window, settings in the legend. */
export function ComparePanel(): ReactNode {
  const { store } = useServices();
  const theme = useChartTheme();
  const { rows, compared, records, sweepId, name, spec } = useWorkbench((s) => ({ rows: s.lab.sweep.rows, compared: s.lab.compared, records: s.lab.records, sweepId: s.lab.sweep.sweepId, name: s.lab.sweep.name, spec: s.lab.sweep.spec }));
  const instance = useRef<ChartInstance | null>(null);
  const entries = useMemo(() => compared.map((name) => rows.find((row) => row.name === name)).filter((row) => row !== undefined).map((row) => ({ row, record: records[row.name] })), [compared, rows, records]);
  const option = useMemo(() => compareOption(entries, theme), [entries, theme]);
  if (entries.length === 0) return null;
  return (
    <section className="panel lab-compare" aria-label="Compare points" data-testid="lab-compare">
      <header className="view-header">
        <h3>Compare {entries.length} point{entries.length > 1 ? 's' : ''}</h3>
        <div className="button-row">
          <FigureExports chart={() => instance.current} title="Mean KLD per window" identity={{ ...sweepIdentity(sweepId, name, spec), settings: `points ${entries.map(({ row }) => `#${row.index} ${pointLabel(row)}`).join('; ')}` }}
            fileStem={`kvscope-sweep-${sweepId ?? 'lab'}-compare`} testId="lab-compare" />
          <button type="button" onClick={() => downloadText(`kvscope-sweep-${sweepId ?? 'lab'}-compare.csv`, 'text/csv;charset=utf-8', pointsCsv(entries.map((e) => e.row)))} data-testid="lab-compare-export-csv">CSV</button>
          <button type="button" onClick={() => downloadText(`kvscope-sweep-${sweepId ?? 'lab'}-compare.tex`, 'application/x-tex', pointsLatex(entries.map((e) => e.row), sweepIdentity(sweepId, name, spec)))} data-testid="lab-compare-export-latex">LaTeX</button>
          <button type="button" onClick={() => { for (const point of compared) store.getState().toggleLabCompare(point); }} data-testid="lab-compare-clear">Clear</button>
        </div>
      </header>
      <table className="lab-table">
        <thead><tr><th scope="col">point</th><th scope="col" className="num">bits/value</th><th scope="col" className="num">PPL</th><th scope="col" className="num">ΔPPL</th><th scope="col" className="num">KLD</th><th scope="col" className="num">same top p</th></tr></thead>
        <tbody>
          {entries.map(({ row }) => (
            <tr key={row.name} data-testid="lab-compare-row">
              <td>#{row.index} {pointLabel(row)}</td>
              <td className="num">{row.result?.bitsPerValue.toFixed(2)}</td>
              <td className="num">{row.result?.ppl.toFixed(4)}</td>
              <td className="num">{row.result?.deltaPpl.toFixed(4)}</td>
              <td className="num">{row.result?.kldMean.toPrecision(3)}</td>
              <td className="num">{row.result === null ? '' : `${(100 * row.result.top1Agreement).toFixed(2)} %`}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <LabChart option={option} points={entries.filter((e) => e.record !== undefined).length} testId="lab-compare-chart" label="Mean KLD per window of the compared points"
        height={220 + 20 * Math.ceil(entries.length / 2)} onChart={(chart) => { instance.current = chart; }} />
    </section>
  );
}
