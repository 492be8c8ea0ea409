import { Fragment, useState, type ReactNode } from 'react';
import { useServices, useWorkbench } from '../../services.js';
import { DEFAULT_TABLE_COLUMNS, TABLE_COLUMNS, tableRows } from './lab-metrics.js';
import { downloadText } from '../../platform/download.js';
import { pointsLatex } from './points-table.js';
import { sweepIdentity } from './sweep-identity.js';
import { useLabController } from './use-lab.js';

/**
 * Every point with llama.cpp's columns: click a heading to sort, type to filter, tick to compare, open
 * one. The settings column is condensed (the whole text on hover) and the metrics shown are chosen
 * (a few by default), so they stay on screen at 1280 px; a refused or failed point says why in full
 * on a line of its own.
 */
export function ResultsTable(): ReactNode {
  const { store } = useServices();
  const lab = useLabController();
  const { rows, table, compared, opened, sweepId, name, spec } = useWorkbench((s) => ({
    rows: s.lab.sweep.rows, table: s.lab.table, compared: s.lab.compared, opened: s.lab.opened.name, sweepId: s.lab.sweep.sweepId, name: s.lab.sweep.name, spec: s.lab.sweep.spec,
  }));
  const [chosen, setChosen] = useState<readonly string[]>(DEFAULT_TABLE_COLUMNS);
  const columns = TABLE_COLUMNS.filter((column) => chosen.includes(column.id));
  const shown = tableRows(rows, table.filter, table.sortBy, table.descending);
  const sort = (id: string): void => store.getState().updateLabTable(table.sortBy === id ? { descending: !table.descending } : { sortBy: id, descending: false });
  const toggleColumn = (id: string): void => setChosen((current) => (current.includes(id) ? current.filter((c) => c !== id) : [...current, id]));
  const textColumn = (id: string): boolean => id === 'settings' || id === 'status';
  return (
    <section className="panel lab-results" aria-label="Results">
      <header className="view-header">
        <h3>Results <span className="muted">({shown.length} of {rows.length})</span></h3>
        <div className="button-row">
          <details className="column-chooser" data-testid="lab-columns">
            <summary>Columns ({columns.length} of {TABLE_COLUMNS.length})</summary>
            <div className="column-chooser-menu">
              {TABLE_COLUMNS.filter((column) => column.id !== 'index' && column.id !== 'settings').map((column) => (
                <label key={column.id} title={column.title}>
                  <input type="checkbox" checked={chosen.includes(column.id)} onChange={() => toggleColumn(column.id)} data-testid={`lab-column-${column.id}`} /> {column.label}
                </label>
              ))}
            </div>
          </details>
          <button type="button" disabled={shown.length === 0} onClick={() => downloadText(`kvscope-sweep-${sweepId ?? 'lab'}-results.tex`, 'application/x-tex', pointsLatex(shown, sweepIdentity(sweepId, name, spec)))}
            title="The rows shown, as a LaTeX booktabs table" data-testid="lab-export-latex">LaTeX</button>
          <input
            type="search" placeholder="filter: hqq 4-bit, refused…" value={table.filter} aria-label="Filter the results"
            onChange={(e) => store.getState().updateLabTable({ filter: e.target.value })} data-testid="lab-filter"
          />
        </div>
      </header>
      <div className="table-scroll">
        <table className="lab-table" data-testid="lab-table">
          <thead>
            <tr>
              <th scope="col"><span className="visually-hidden">Compare</span></th>
              {columns.map((column) => (
                <th
                  scope="col" key={column.id} title={column.title} className={textColumn(column.id) ? `col-${column.id}` : 'num'}
                  aria-sort={table.sortBy === column.id ? (table.descending ? 'descending' : 'ascending') : 'none'} data-column={column.id}
                >
                  <button type="button" className="link" onClick={() => sort(column.id)} data-testid={`lab-sort-${column.id}`}>
                    {column.label}{table.sortBy === column.id ? (table.descending ? ' ↓' : ' ↑') : ''}
                  </button>
                </th>
              ))}
              <th scope="col" className="open-cell"><span className="visually-hidden">Open</span></th>
            </tr>
          </thead>
          <tbody>
            {shown.map((row) => (
              <Fragment key={row.index}>
                <tr data-testid="lab-row" data-name={row.name} data-status={row.status} className={opened === row.name ? 'ticked' : undefined}>
                  <td>
                    <input
                      type="checkbox" checked={compared.includes(row.name)} disabled={row.result === null}
                      onChange={() => void lab.toggleCompare(row.name)} aria-label={`Compare point ${row.index}`} data-testid="lab-compare-toggle"
                    />
                  </td>
                  {columns.map((column) => {
                    const text = column.format(row);
                    return (
                      <td key={column.id} className={textColumn(column.id) ? `col-${column.id}` : 'num'} title={column.id === 'settings' ? text : column.id === 'status' ? row.reason ?? undefined : undefined} data-column={column.id}>
                        {text}
                      </td>
                    );
                  })}
                  <td className="open-cell"><button type="button" onClick={() => void lab.openPoint(row.name)} disabled={row.result === null} data-testid="lab-open-point">Open</button></td>
                </tr>
                {row.reason !== null && row.status !== 'ok' && (
                  <tr className="lab-row-reason" data-testid="lab-row-reason" data-name={row.name}>
                    <td />
                    <td colSpan={columns.length + 1}><span className="muted">{row.status === 'refused' ? 'Refused' : 'Failed'}:</span> {row.reason}</td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
