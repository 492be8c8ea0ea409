import { useMemo, useState, type ReactNode } from 'react';
import type { RunRecord } from '../../../app/record/run-record.js';
import { COMPARE_CHARTS, runLetter } from '../../charts/compare-charts.js';
import { ranPath } from '../../format/dequantize-path.js';
import { describeSettings, recordIdentity } from '../../format/run-labels.js';
import { useChartTheme, useServices, useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { ChartPanel } from '../dashboard/ChartPanel.js';
import { RunDashboard } from '../dashboard/RunDashboard.js';
import { CompareExports } from './CompareExports.js';
import { COMPARE_ROWS } from './compare-rows.js';

/** 2 to 8 saved runs: a table of what differs, then the same charts overlaid or side by side. */
export function CompareView(): ReactNode {
  const compare = useWorkbench((s) => s.compare);
  const theme = useChartTheme();
  const [layout, setLayout] = useState<'overlay' | 'split'>('overlay');
  if (compare.status === 'loading') return <p className="muted" role="status">Loading the runs…</p>;
  if (compare.status === 'error' && compare.error !== null) return <div className="callout callout-error" role="alert"><ErrorDetails error={compare.error} testId="compare-error" /></div>;
  if (compare.records === null || compare.records.length < 2) return <p className="muted" data-testid="compare-empty">Tick 2 to 8 runs in the history, then press Compare.</p>;
  const records = compare.records;
  return (
    <div className="compare-view" data-testid="compare-view" data-runs={records.length}>
      <header className="view-header">
        <h2>Compare {records.length} runs</h2>
        <div className="button-row">
          <CompareExports records={records} />
          <div className="segmented" role="radiogroup" aria-label="Chart layout">
            <label className={layout === 'overlay' ? 'selected' : undefined}><input type="radio" name="compare-layout" checked={layout === 'overlay'} onChange={() => setLayout('overlay')} data-testid="compare-layout-overlay" />Overlaid</label>
            <label className={layout === 'split' ? 'selected' : undefined}><input type="radio" name="compare-layout" checked={layout === 'split'} onChange={() => setLayout('split')} data-testid="compare-layout-split" />Side by side</label>
          </div>
        </div>
      </header>
      <div className="compare-table-wrap">
        <table className="compare-table" data-testid="compare-table">
          <thead>
            <tr>
              <th scope="col" />
              {records.map((record, index) => (
                <th key={record.id} scope="col"><span className="swatch" style={{ background: theme.runs[index % theme.runs.length] }} /> Run {runLetter(index)}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {COMPARE_ROWS.map((row) => {
              const values = records.map((record) => row.value(record));
              const differs = row.label !== 'Run' && new Set(values).size > 1;
              return (
                <tr key={row.label} className={differs ? 'differs' : undefined} data-testid={`compare-row-${row.id}`}>
                  <th scope="row">{row.label}</th>{values.map((value, index) => <td key={records[index]!.id}>{value}</td>)}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {layout === 'overlay' ? <OverlayCharts records={records} /> : <SplitCharts records={records} />}
    </div>
  );
}

function OverlayCharts({ records }: { records: readonly RunRecord[] }): ReactNode {
  const { controller } = useServices();
  const buffers = controller.savedBuffers(records[0]!);
  // one array per set of records, so the charts do not rebuild on every render
  const compared = useMemo(() => records.slice(1).map((record) => controller.savedBuffers(record)), [controller, records]);
  const identity = {
    runId: records.map((r) => r.id).join('-vs-'),
    model: records.map((r, i) => `${runLetter(i)}: ${recordIdentity(r).model}`).join(' · '),
    settings: records.map((r, i) => `${runLetter(i)}: ${describeSettings(r.settings)}${pathSuffix(r)}`).join(' · '),
  };
  return (
    <div className="chart-grid" data-testid="compare-overlay">
      {COMPARE_CHARTS.map((spec, index) => (
        <ChartPanel key={spec.id} spec={spec} buffers={buffers} compared={compared} identity={identity} wide={index === 0}
          emptyMessage={spec.id === 'compare-reference' && records.every((r) => !r.settings.reference) ? 'No compared run had the reference lane on.' : null} />
      ))}
    </div>
  );
}

function pathSuffix(record: RunRecord): string {
  const path = ranPath(record);
  return path === null ? '' : ` · dequantized ${path.short}`;
}

function SplitCharts({ records }: { records: readonly RunRecord[] }): ReactNode {
  const { controller } = useServices();
  return (
    <div className="split" data-testid="compare-split" style={{ gridTemplateColumns: `repeat(${Math.min(records.length, 2)}, minmax(0, 1fr))` }}>
      {records.map((record, index) => (
        <section key={record.id} aria-label={`Run ${runLetter(index)}`}>
          <h3>Run {runLetter(index)} <code>{record.id}</code></h3>
          <RunDashboard buffers={controller.savedBuffers(record)} referenceOn={record.settings.reference} quantized={record.settings.cacheMode === 'quantized'}
            identity={recordIdentity(record)} comparedWith={controller.savedBuffers(records[index === 0 ? 1 : 0]!)} />
        </section>
      ))}
    </div>
  );
}

