import { useState, type ReactNode } from 'react';
import type { RunRecord } from '../../../app/record/run-record.js';
import { modelName } from '../../../app/record/run-summary.js';
import { COMPARE_CHARTS } from '../../charts/compare-charts.js';
import { describeSettings, recordIdentity } from '../../format/run-labels.js';
import { formatBytes, formatError, formatPercent, formatTokensPerSecond, storedVsBaselines } from '../../format/units.js';
import { useServices, useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { ChartPanel } from '../dashboard/ChartPanel.js';
import { RunDashboard } from '../dashboard/RunDashboard.js';

interface Row {
  readonly label: string;
  readonly value: (record: RunRecord) => string;
}

const ROWS: readonly Row[] = [
  { label: 'Run', value: (r) => r.id },
  { label: 'Model', value: (r) => `${modelName(r)} (${r.model.onnxFile})` },
  { label: 'Cache', value: (r) => describeSettings(r.settings) },
  { label: 'Prompt', value: (r) => JSON.stringify(r.settings.prompt) },
  { label: 'Tokens', value: (r) => String(r.generatedTokenIds.length) },
  { label: 'Flushes per layer', value: (r) => r.flushCounts.filter((c) => c !== null).join(' ') || '—' },
  { label: 'KV stored (end)', value: (r) => `${formatBytes(r.kvBytesTotal.totalBytes)}: ${storedVsBaselines(r.kvBytesTotal, r.model.kvDtype)}` },
  { label: 'Decode speed', value: (r) => formatTokensPerSecond(r.timings.decodeTokensPerSecond) },
  { label: 'Mean KL', value: (r) => (r.reference === null ? '—' : `${formatError(r.reference.meanKl)} nats`) },
  { label: 'Top-1 agreement', value: (r) => (r.reference === null ? '—' : formatPercent(r.reference.top1Agreement)) },
];

/** Two saved runs: a table of what differs, then the same charts overlaid or side by side. */
export function CompareView(): ReactNode {
  const compare = useWorkbench((s) => s.compare);
  const [layout, setLayout] = useState<'overlay' | 'split'>('overlay');
  if (compare.status === 'loading') return <p className="muted" role="status">Loading the two runs…</p>;
  if (compare.status === 'error' && compare.error !== null) return <div className="callout callout-error" role="alert"><ErrorDetails error={compare.error} testId="compare-error" /></div>;
  if (compare.records === null) return <p className="muted" data-testid="compare-empty">Tick two runs in the history, then press Compare.</p>;
  const [a, b] = compare.records;
  return (
    <div className="compare-view" data-testid="compare-view">
      <header className="view-header">
        <h2>Compare runs</h2>
        <div className="segmented" role="radiogroup" aria-label="Chart layout">
          <label className={layout === 'overlay' ? 'selected' : undefined}><input type="radio" name="compare-layout" checked={layout === 'overlay'} onChange={() => setLayout('overlay')} data-testid="compare-layout-overlay" />Overlaid</label>
          <label className={layout === 'split' ? 'selected' : undefined}><input type="radio" name="compare-layout" checked={layout === 'split'} onChange={() => setLayout('split')} data-testid="compare-layout-split" />Side by side</label>
        </div>
      </header>
      <table className="compare-table" data-testid="compare-table">
        <thead><tr><th scope="col" /><th scope="col"><span className="swatch run-a" /> Run A</th><th scope="col"><span className="swatch run-b" /> Run B</th></tr></thead>
        <tbody>
          {ROWS.map((row) => {
            const left = row.value(a);
            const right = row.value(b);
            return (
              <tr key={row.label} className={left !== right && row.label !== 'Run' ? 'differs' : undefined}>
                <th scope="row">{row.label}</th><td>{left}</td><td>{right}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {layout === 'overlay' ? <OverlayCharts a={a} b={b} /> : <SplitCharts a={a} b={b} />}
    </div>
  );
}

function OverlayCharts({ a, b }: { a: RunRecord; b: RunRecord }): ReactNode {
  const { controller } = useServices();
  const bufferA = controller.savedBuffers(a);
  const bufferB = controller.savedBuffers(b);
  return (
    <div className="chart-grid" data-testid="compare-overlay">
      {COMPARE_CHARTS.map((spec, index) => (
        <ChartPanel key={spec.id} spec={spec} buffers={bufferA} other={bufferB} identity={{ runId: `${a.id}-vs-${b.id}`, model: `A: ${recordIdentity(a).model} · B: ${recordIdentity(b).model}`, settings: `A: ${describeSettings(a.settings)} · B: ${describeSettings(b.settings)}` }} wide={index === 0}
          emptyMessage={spec.id === 'compare-reference' && !a.settings.reference && !b.settings.reference ? 'Neither run had the reference lane on.' : null} />
      ))}
    </div>
  );
}

function SplitCharts({ a, b }: { a: RunRecord; b: RunRecord }): ReactNode {
  const { controller } = useServices();
  return (
    <div className="split" data-testid="compare-split">
      {[a, b].map((record, index) => (
        <section key={record.id} aria-label={`Run ${index === 0 ? 'A' : 'B'}`}>
          <h3>Run {index === 0 ? 'A' : 'B'} <code>{record.id}</code></h3>
          <RunDashboard buffers={controller.savedBuffers(record)} referenceOn={record.settings.reference} quantized={record.settings.cacheMode === 'quantized'}
            identity={recordIdentity(record)} comparedWith={controller.savedBuffers(index === 0 ? b : a)} />
        </section>
      ))}
    </div>
  );
}
