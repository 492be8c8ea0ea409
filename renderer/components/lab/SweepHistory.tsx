import { useState, type ReactNode } from 'react';
import type { LabSweepSummary } from '../../../app/lab/lab-api.js';
import { useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { useLabController } from './use-lab.js';

/** Saved sweeps, newest first, with the columns researchers filter on; open one to see (and resume) it. */
export function SweepHistory(): ReactNode {
  const lab = useLabController();
  const history = useWorkbench((s) => s.lab.history);
  const [filter, setFilter] = useState('');
  const words = filter.toLowerCase().split(/\s+/).filter((w) => w !== '');
  const shown = history.sweeps.filter((sweep) => words.every((word) => describe(sweep).toLowerCase().includes(word)));
  return (
    <section className="panel lab-history" aria-label="Saved sweeps" data-testid="lab-history">
      <header className="view-header">
        <h3>Saved sweeps <span className="muted">({history.sweeps.length})</span></h3>
        <div className="button-row">
          <input type="search" placeholder="filter: hqq 4 partial…" value={filter} onChange={(e) => setFilter(e.target.value)} aria-label="Filter the saved sweeps" data-testid="lab-history-filter" />
          <button type="button" onClick={() => void lab.refreshHistory()} data-testid="lab-history-refresh">Refresh</button>
        </div>
      </header>
      {history.error !== null && <div className="callout callout-error" role="alert"><ErrorDetails error={history.error} testId="lab-history-error" /></div>}
      {history.sweeps.length === 0 ? <p className="muted">{history.status === 'loading' ? 'Loading…' : 'No sweeps yet.'}</p> : (
        <div className="table-scroll">
          <table className="lab-table" data-testid="lab-history-table">
            <thead>
              <tr>
                <th scope="col" className="name-cell">name</th><th scope="col">model</th><th scope="col">started</th><th scope="col" className="num">points</th><th scope="col">status</th>
                <th scope="col">backend</th><th scope="col">bits</th><th scope="col">group</th><th scope="col">axes</th><th scope="col">residual</th>
                <th scope="col" className="num">best KLD</th><th scope="col" className="num">best top-1</th><th scope="col"><span className="visually-hidden">Open</span></th>
              </tr>
            </thead>
            <tbody>
              {shown.map((sweep) => (
                <tr key={sweep.id} data-testid="lab-history-row" data-sweep-id={sweep.id}>
                  {/* the name wraps in the Lab's side column (and stays pinned while the columns scroll); the id on hover */}
                  <td className="name-cell" title={`${sweep.name}${sweep.preset !== null ? ` (${sweep.preset})` : ''} · ${sweep.id}`} data-testid="lab-history-name">
                    {sweep.name}{sweep.preset !== null && <span className="muted"> ({sweep.preset})</span>}
                  </td>
                  <td>{sweep.model}</td>
                  <td>{sweep.createdAt === '' ? '' : <time dateTime={sweep.createdAt}>{new Date(sweep.createdAt).toLocaleString()}</time>}</td>
                  <td className="num">{sweep.complete}/{sweep.points}</td>
                  <td>{sweep.status}</td>
                  <td>{sweep.backends.join(', ')}</td>
                  <td>{sweep.nbits.join(', ')}</td>
                  <td>{sweep.groupSizes.join(', ')}</td>
                  <td>{sweep.axes.join(', ')}</td>
                  <td>{sweep.residualLengths.join(', ')}</td>
                  <td className="num">{sweep.bestKld === null ? '' : sweep.bestKld.toPrecision(3)}</td>
                  <td className="num">{sweep.bestTop1 === null ? '' : `${(100 * sweep.bestTop1).toFixed(1)} %`}</td>
                  <td><button type="button" onClick={() => void lab.openSweep(sweep.id)} data-testid="lab-history-open">Open</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function describe(sweep: LabSweepSummary): string {
  return [sweep.name, sweep.model, sweep.status, sweep.preset ?? '', ...sweep.backends, ...sweep.nbits.map(String), ...sweep.groupSizes.map(String),
    ...sweep.axes, ...sweep.residualLengths.map(String)].join(' ');
}
