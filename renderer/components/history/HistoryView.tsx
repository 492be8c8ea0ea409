import { useState, type ReactNode } from 'react';
import type { RunSummary } from '../../../app/protocol/workbench-api.js';
import { compareToBaseline, formatBytes, formatTokensPerSecond } from '../../format/units.js';

/** The dtype of the dynamic cache a run's cache replaces (fp16 for a summary from before that was recorded). */
function dtypeName(run: RunSummary): string {
  return run.dtypeBaselineBytes === undefined || run.kvDtype === 'float16' ? 'fp16' : 'fp32';
}
import { useServices, useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { DamagedRecords } from './DamagedRecords.js';

/** Every saved run, newest first: open, tick two to compare, export, delete. */
export function HistoryView(): ReactNode {
  const { controller } = useServices();
  const { history, ticked } = useWorkbench((s) => ({ history: s.history, ticked: s.compare.runIds }));
  return (
    <div className="history-view" data-testid="history-view">
      <header className="view-header">
        <h2>Run history <span className="muted">({history.runs.length})</span></h2>
        <div className="button-row">
          <button type="button" className="primary" disabled={ticked.length !== 2} onClick={() => void controller.compareRuns()} data-testid="compare-button">
            Compare {ticked.length}/2
          </button>
          <button type="button" onClick={() => void controller.refreshHistory()} data-testid="history-refresh">Refresh</button>
        </div>
      </header>
      {history.error !== null && <div className="callout callout-error" role="alert"><ErrorDetails error={history.error} testId="history-error" /></div>}
      {history.runs.length === 0 ? (
        <p className="muted" data-testid="history-empty">{history.status === 'loading' ? 'Loading…' : 'No saved runs yet. Every finished or cancelled run is saved here.'}</p>
      ) : (
        <table className="history-table" data-testid="history-table">
          <thead>
            <tr>
              <th scope="col"><span className="visually-hidden">Compare</span></th>
              <th scope="col">Finished</th><th scope="col">Model</th><th scope="col">Cache</th><th scope="col">EP</th>
              <th scope="col" className="num">Tokens</th><th scope="col" className="num">Decode</th><th scope="col" className="num">KV stored</th><th scope="col">Stop</th>
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {history.runs.map((run) => <HistoryRow key={run.id} run={run} ticked={ticked.includes(run.id)} />)}
          </tbody>
        </table>
      )}
      <DamagedRecords files={history.damaged} />
    </div>
  );
}

function HistoryRow({ run, ticked }: { run: RunSummary; ticked: boolean }): ReactNode {
  const { controller, store } = useServices();
  const [confirming, setConfirming] = useState(false);
  const cache = run.cacheMode === 'dynamic' ? 'dynamic' : `${run.backend ?? '?'} ${run.nbits ?? '?'}-bit`;
  return (
    <tr data-testid="history-row" data-run-id={run.id} className={ticked ? 'ticked' : undefined}>
      <td>
        <input type="checkbox" checked={ticked} onChange={() => store.getState().toggleCompare(run.id)} aria-label={`Compare run ${run.id}`} data-testid="history-compare-toggle" />
      </td>
      <td><time dateTime={run.createdAt} title={run.id}>{new Date(run.createdAt).toLocaleString()}</time></td>
      <td>{run.modelName}</td>
      <td>{cache}</td>
      <td>{run.executionProvider}</td>
      <td className="num">{run.tokens}</td>
      <td className="num">{formatTokensPerSecond(run.decodeTokensPerSecond)}</td>
      <td className="num" title={`the ${dtypeName(run)} dynamic cache of the same tokens: ${formatBytes(run.dtypeBaselineBytes ?? run.fp16BaselineBytes)}; fp16: ${formatBytes(run.fp16BaselineBytes)}`}>
        {formatBytes(run.totalKvBytes)} <span className="muted">({compareToBaseline(run.dtypeBaselineBytes ?? run.fp16BaselineBytes, run.totalKvBytes, dtypeName(run))})</span>
      </td>
      <td>{run.stopReason}</td>
      <td className="actions">
        <button type="button" onClick={() => void controller.openSavedRun(run.id)} data-testid="history-open">Open</button>
        <button type="button" onClick={() => void controller.exportRun(run.id, 'json')} data-testid="history-export-json">JSON</button>
        <button type="button" onClick={() => void controller.exportRun(run.id, 'csv')} data-testid="history-export-csv">CSV</button>
        {confirming ? (
          <>
            <button type="button" className="danger" onClick={() => void controller.deleteRun(run.id)} data-testid="history-delete-confirm">Delete</button>
            <button type="button" onClick={() => setConfirming(false)}>Keep</button>
          </>
        ) : (
          <button type="button" onClick={() => setConfirming(true)} aria-label={`Delete run ${run.id}`} data-testid="history-delete">Delete…</button>
        )}
      </td>
    </tr>
  );
}
