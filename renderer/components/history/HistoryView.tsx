import { Fragment, useMemo, useState, type ReactNode } from 'react';
import type { RunSummary } from '../../../app/protocol/workbench-api.js';
import { compareToBaseline, formatBytes } from '../../format/units.js';
import { useServices, useWorkbench } from '../../services.js';
import { MAX_COMPARED, MIN_COMPARED } from '../../store/history-slice.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { DamagedRecords } from './DamagedRecords.js';
import { DEFAULT_HISTORY_COLUMNS, DEFAULT_HISTORY_SORT, filterRuns, HISTORY_COLUMNS, sortRuns, type HistoryColumn, type HistorySort } from './history-columns.js';

/** The dtype of the dynamic cache a run's cache replaces (fp16 for a summary from before that was recorded). */
function dtypeName(run: RunSummary): string {
  return run.dtypeBaselineBytes === undefined || run.kvDtype === 'float16' ? 'fp16' : 'fp32';
}

/**
 * Every saved run as a table of settings and figures (history-columns.ts): sort by a header, filter
 * by words, tick 2 to 8 runs to compare, choose the columns. Headers and long cells wrap and the
 * actions sit two by two, so the default columns fit beside the Run panel at 1280 px; the actions
 * column stays pinned at the right edge, so Open, exports and Delete show whatever the columns chosen.
 */
export function HistoryView(): ReactNode {
  const { controller } = useServices();
  const { history, ticked } = useWorkbench((s) => ({ history: s.history, ticked: s.compare.runIds }));
  const [sort, setSort] = useState<HistorySort>(DEFAULT_HISTORY_SORT);
  const [query, setQuery] = useState('');
  const [chosen, setChosen] = useState<readonly string[]>(DEFAULT_HISTORY_COLUMNS);
  const columns = HISTORY_COLUMNS.filter((column) => chosen.includes(column.id));
  const toggleColumn = (id: string): void => setChosen((current) => (current.includes(id) ? current.filter((c) => c !== id) : [...current, id]));
  const shown = useMemo(() => sortRuns(filterRuns(history.runs, query), sort), [history.runs, query, sort]);
  const full = ticked.length >= MAX_COMPARED;
  const sortBy = (column: string): void => setSort((current) => ({ column, descending: current.column === column ? !current.descending : false }));
  return (
    <div className="history-view" data-testid="history-view">
      <header className="view-header">
        <h2>Run history <span className="muted">({shown.length === history.runs.length ? history.runs.length : `${shown.length} of ${history.runs.length}`})</span></h2>
        <div className="button-row">
          <details className="column-chooser" data-testid="history-columns">
            <summary>Columns ({columns.length} of {HISTORY_COLUMNS.length})</summary>
            <div className="column-chooser-menu">
              {HISTORY_COLUMNS.map((column) => (
                <label key={column.id} title={column.title}>
                  <input type="checkbox" checked={chosen.includes(column.id)} onChange={() => toggleColumn(column.id)} data-testid={`history-column-${column.id}`} /> {column.label}
                </label>
              ))}
            </div>
          </details>
          <input type="search" className="history-filter" value={query} onChange={(event) => setQuery(event.target.value)} placeholder="Filter: hqq graph 4-bit…" aria-label="Filter runs by words in any column" data-testid="history-filter" />
          <button type="button" className="primary" disabled={ticked.length < MIN_COMPARED} onClick={() => void controller.compareRuns()}
            title={`Tick ${MIN_COMPARED} to ${MAX_COMPARED} runs`} data-testid="compare-button">
            Compare {ticked.length} {ticked.length === 1 ? 'run' : 'runs'}
          </button>
          <button type="button" onClick={() => void controller.refreshHistory()} data-testid="history-refresh">Refresh</button>
        </div>
      </header>
      {full && <p className="muted" role="status" data-testid="history-compare-full">{MAX_COMPARED} runs ticked, the most Compare draws apart; untick one to tick another.</p>}
      {history.error !== null && <div className="callout callout-error" role="alert"><ErrorDetails error={history.error} testId="history-error" /></div>}
      {history.runs.length === 0 ? (
        <p className="muted" data-testid="history-empty">{history.status === 'loading' ? 'Loading…' : 'No saved runs yet. Every finished or cancelled run is saved here.'}</p>
      ) : (
        <div className="history-scroll">
          <table className="history-table" data-testid="history-table">
            <thead>
              <tr>
                <th scope="col"><span className="visually-hidden">Compare</span></th>
                {columns.map((column) => (
                  <th key={column.id} scope="col" className={column.numeric ? 'num' : undefined} title={column.title}
                    aria-sort={sort.column === column.id ? (sort.descending ? 'descending' : 'ascending') : 'none'}>
                    <button type="button" className="sort-header" onClick={() => sortBy(column.id)} data-testid={`history-sort-${column.id}`}>
                      {wrappable(column.label)}{sort.column === column.id ? (sort.descending ? ' ▼' : ' ▲') : ''}
                    </button>
                  </th>
                ))}
                <th scope="col" className="actions-cell"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {shown.map((run) => <HistoryRow key={run.id} run={run} columns={columns} ticked={ticked.includes(run.id)} canTick={!full} />)}
            </tbody>
          </table>
          {shown.length === 0 && <p className="muted" data-testid="history-filter-empty">No run matches “{query}”.</p>}
        </div>
      )}
      <DamagedRecords files={history.damaged} />
    </div>
  );
}

/** A header may break after a slash ("Bits/⏎value"), as after a space. */
function wrappable(label: string): ReactNode {
  return label.split('/').map((part, i) => (i === 0 ? part : <Fragment key={i}>/<wbr />{part}</Fragment>));
}

/** A text cell wraps between words only ("quanto ⏎4-bit", never "8-⏎bit"). */
function words(text: string): ReactNode {
  return text.split(' ').map((word, i) => <Fragment key={i}>{i > 0 && ' '}<span className="nowrap">{word}</span></Fragment>);
}

function HistoryRow({ run, columns, ticked, canTick }: { run: RunSummary; columns: readonly HistoryColumn[]; ticked: boolean; canTick: boolean }): ReactNode {
  const { controller, store } = useServices();
  const [confirming, setConfirming] = useState(false);
  return (
    <tr data-testid="history-row" data-run-id={run.id} className={ticked ? 'ticked' : undefined}>
      <td>
        <input type="checkbox" checked={ticked} disabled={!ticked && !canTick} onChange={() => store.getState().toggleCompare(run.id)} aria-label={`Compare run ${run.id}`} data-testid="history-compare-toggle" />
      </td>
      {columns.map((column) => {
        if (column.id === 'kv') {
          return (
            <td key={column.id} className="num" title={`the ${dtypeName(run)} dynamic cache of the same tokens: ${formatBytes(run.dtypeBaselineBytes ?? run.fp16BaselineBytes)}; fp16: ${formatBytes(run.fp16BaselineBytes)}`}>
              {column.text(run)} <span className="muted baseline-ratio">({compareToBaseline(run.dtypeBaselineBytes ?? run.fp16BaselineBytes, run.totalKvBytes, dtypeName(run))})</span>
            </td>
          );
        }
        if (column.id === 'finished') {
          // the date over the time: the column takes the width of a date, not of both
          const at = new Date(run.createdAt);
          // a cancelled run reads as one whichever columns are shown (the Stop column is a tick away)
          const cancelled = run.stopReason === 'cancelled' ? <> <span className="badge badge-warning" data-testid="history-cancelled">cancelled</span></> : null;
          return <td key={column.id}><time dateTime={run.createdAt} title={`${column.text(run)} · ${run.id}`}>{at.toLocaleDateString()}<br />{at.toLocaleTimeString()}</time>{cancelled}</td>;
        }
        return <td key={column.id} className={column.numeric ? 'num' : undefined} data-testid={`history-${column.id}`}>{column.numeric ? column.text(run) : words(column.text(run))}</td>;
      })}
      <td className="actions-cell">
        <div className="actions">
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
        </div>
      </td>
    </tr>
  );
}
