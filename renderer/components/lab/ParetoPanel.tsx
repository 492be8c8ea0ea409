import { useMemo, useRef, type ReactNode } from 'react';
import type { ChartInstance } from '../../charts/echarts-core.js';
import { useChartTheme, useServices, useWorkbench } from '../../services.js';
import type { ParetoX, ParetoY } from '../../store/lab-slice.js';
import { paretoOption } from './lab-charts.js';
import { X_LABELS, Y_LABELS } from './lab-metrics.js';
import { FigureExports } from '../common/FigureExports.js';
import { LabChart } from './LabChart.js';
import { sweepIdentity } from './sweep-identity.js';
import { useLabController } from './use-lab.js';

/** Quality against cost, every measured point a dot, the Pareto frontier drawn; a click opens the point. */
export function ParetoPanel(): ReactNode {
  const { store } = useServices();
  const lab = useLabController();
  const theme = useChartTheme();
  const { rows, chart, sweepId, name, spec } = useWorkbench((s) => ({ rows: s.lab.sweep.rows, chart: s.lab.chart, sweepId: s.lab.sweep.sweepId, name: s.lab.sweep.name, spec: s.lab.sweep.spec }));
  const context = spec?.fixed['context'];
  const { option, points } = useMemo(() => paretoOption(rows, chart, theme), [rows, chart, theme]);
  const instance = useRef<ChartInstance | null>(null);
  const update = store.getState().updateLabChart;
  return (
    <section className="panel lab-pareto" aria-label="Pareto chart">
      <header className="view-header">
        <h3>Trade-off <span className="muted">({points} points{chart.x === 'bytes' && context !== undefined ? `, at ${String(context)} tokens` : ''})</span></h3>
        <div className="button-row">
          <label className="inline-field">x
            <select value={chart.x} onChange={(e) => update({ x: e.target.value as ParetoX })} data-testid="lab-pareto-x">
              {(Object.keys(X_LABELS) as ParetoX[]).map((x) => <option key={x} value={x}>{X_LABELS[x]}</option>)}
            </select>
          </label>
          <label className="inline-field">y
            <select value={chart.y} onChange={(e) => update({ y: e.target.value as ParetoY })} data-testid="lab-pareto-y">
              {(Object.keys(Y_LABELS) as ParetoY[]).map((y) => <option key={y} value={y}>{Y_LABELS[y]}</option>)}
            </select>
          </label>
          <label className="checkbox"><input type="checkbox" checked={chart.logX} onChange={(e) => update({ logX: e.target.checked })} data-testid="lab-pareto-logx" />log x</label>
          <label className="checkbox"><input type="checkbox" checked={chart.logY} onChange={(e) => update({ logY: e.target.checked })} data-testid="lab-pareto-logy" />log y</label>
          <label className="checkbox" title="Name every point beside its dot (off: hover a dot to name it)">
            <input type="checkbox" checked={chart.labels} onChange={(e) => update({ labels: e.target.checked })} data-testid="lab-pareto-labels" />labels
          </label>
          <FigureExports chart={() => instance.current} title={`${Y_LABELS[chart.y]} against ${X_LABELS[chart.x]}`} identity={sweepIdentity(sweepId, name, spec)}
            fileStem={`kvscope-sweep-${sweepId ?? 'lab'}-pareto`} disabled={sweepId === null} testId="lab-pareto" />
        </div>
      </header>
      <LabChart
        option={option} points={points} testId="lab-pareto" label={`${Y_LABELS[chart.y]} against ${X_LABELS[chart.x]}`}
        onItemClick={(data) => {
          // a dot is a data item `{ value: [x, y, name, …] }` (lab-charts.ts labelSides)
          const value = typeof data === 'object' && data !== null && 'value' in data ? (data as { value: unknown }).value : data;
          const name = Array.isArray(value) ? value[2] : undefined;
          if (typeof name === 'string') void lab.openPoint(name);
        }}
        onChart={(chart) => { instance.current = chart; }}
      />
    </section>
  );
}
