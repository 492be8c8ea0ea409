import type { ReactNode } from 'react';
import { useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { useLabController } from './use-lab.js';

/** The shown sweep: its progress, Stop and Resume, and exports of its results. */
export function SweepStatus(): ReactNode {
  const lab = useLabController();
  const sweep = useWorkbench((s) => s.lab.sweep);
  if (sweep.status === 'idle') return null;
  const done = sweep.progress?.done ?? sweep.rows.length;
  const total = sweep.total === 0 ? sweep.points.length : sweep.total;
  const running = sweep.status === 'running' || sweep.status === 'starting' || sweep.status === 'stopping';
  const incomplete = !running && sweep.sweepId !== null && sweep.rows.length < total;
  return (
    <section className="lab-status panel" aria-label="Sweep status" data-testid="lab-status" data-status={sweep.status}>
      <header className="view-header">
        <h3>{sweep.name || 'Sweep'} <span className="muted">{sweep.sweepId ?? ''}</span></h3>
        <div className="button-row">
          {running && <button type="button" onClick={() => void lab.stop()} disabled={sweep.status === 'stopping'} data-testid="lab-stop">{sweep.status === 'stopping' ? 'Stopping…' : 'Stop'}</button>}
          {incomplete && <button type="button" className="primary" onClick={() => void lab.resume()} data-testid="lab-resume">Resume</button>}
          <button type="button" onClick={() => void lab.exportResults('csv')} disabled={sweep.sweepId === null} data-testid="lab-export-csv">CSV</button>
          <button type="button" onClick={() => void lab.exportResults('json')} disabled={sweep.sweepId === null} data-testid="lab-export-json">JSON</button>
        </div>
      </header>
      <progress max={Math.max(1, total)} value={done} aria-label="Points complete" />
      <p className="muted" data-testid="lab-progress-text">
        {done} of {total} points {running ? 'complete' : sweep.interrupted ? 'complete (stopped; Resume runs the rest)' : 'complete'}
        {sweep.progress !== null && sweep.progress.running.length > 0 && <> · running {sweep.progress.running.join(', ')}</>}
        {sweep.rows.some((row) => row.status !== 'ok') && <> · {sweep.rows.filter((row) => row.status !== 'ok').length} refused or failed</>}
      </p>
      {sweep.error !== null && <div className="callout callout-error" role="alert"><ErrorDetails error={sweep.error} testId="lab-error" /></div>}
    </section>
  );
}
