import { useMemo, type ReactNode } from 'react';
import { useChartTheme, useServices, useWorkbench } from '../../services.js';
import { compareOption } from './lab-charts.js';
import { pointLabel } from './lab-metrics.js';
import { LabChart } from './LabChart.js';

/** The points ticked in the table, side by side: their figures, and their mean KLD per window, settings in the legend. */
export function ComparePanel(): ReactNode {
  const { store } = useServices();
  const theme = useChartTheme();
  const { rows, compared, records } = useWorkbench((s) => ({ rows: s.lab.sweep.rows, compared: s.lab.compared, records: s.lab.records }));
  const entries = useMemo(() => compared.map((name) => rows.find((row) => row.name === name)).filter((row) => row !== undefined).map((row) => ({ row, record: records[row.name] })), [compared, rows, records]);
  const option = useMemo(() => compareOption(entries, theme), [entries, theme]);
  if (entries.length === 0) return null;
  return (
    <section className="panel lab-compare" aria-label="Compare points" data-testid="lab-compare">
      <header className="view-header">
        <h3>Compare {entries.length} point{entries.length > 1 ? 's' : ''}</h3>
        <button type="button" onClick={() => { for (const name of compared) store.getState().toggleLabCompare(name); }} data-testid="lab-compare-clear">Clear</button>
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
      <LabChart option={option} points={entries.filter((e) => e.record !== undefined).length} testId="lab-compare-chart" label="Mean KLD per window of the compared points" height={240} />
    </section>
  );
}
