import type { ReactNode } from 'react';
import { useServices, useWorkbench } from '../../services.js';
import { TABLE_COLUMNS, tableRows } from './lab-metrics.js';
import { useLabController } from './use-lab.js';

/** Every point with llama.cpp's columns: click a heading to sort, type to filter, tick to compare, open one. */
export function ResultsTable(): ReactNode {
  const { store } = useServices();
  const lab = useLabController();
  const { rows, table, compared, opened } = useWorkbench((s) => ({ rows: s.lab.sweep.rows, table: s.lab.table, compared: s.lab.compared, opened: s.lab.opened.name }));
  const shown = tableRows(rows, table.filter, table.sortBy, table.descending);
  const sort = (id: string): void => store.getState().updateLabTable(table.sortBy === id ? { descending: !table.descending } : { sortBy: id, descending: false });
  return (
    <section className="panel lab-results" aria-label="Results">
      <header className="view-header">
        <h3>Results <span className="muted">({shown.length} of {rows.length})</span></h3>
        <input
          type="search" placeholder="filter: hqq 4-bit, refused…" value={table.filter} aria-label="Filter the results"
          onChange={(e) => store.getState().updateLabTable({ filter: e.target.value })} data-testid="lab-filter"
        />
      </header>
      <div className="table-scroll">
        <table className="lab-table" data-testid="lab-table">
          <thead>
            <tr>
              <th scope="col"><span className="visually-hidden">Compare</span></th>
              {TABLE_COLUMNS.map((column) => (
                <th
                  scope="col" key={column.id} title={column.title} className={column.id === 'settings' || column.id === 'status' ? undefined : 'num'}
                  aria-sort={table.sortBy === column.id ? (table.descending ? 'descending' : 'ascending') : 'none'}
                >
                  <button type="button" className="link" onClick={() => sort(column.id)} data-testid={`lab-sort-${column.id}`}>
                    {column.label}{table.sortBy === column.id ? (table.descending ? ' ↓' : ' ↑') : ''}
                  </button>
                </th>
              ))}
              <th scope="col"><span className="visually-hidden">Open</span></th>
            </tr>
          </thead>
          <tbody>
            {shown.map((row) => (
              <tr key={row.index} data-testid="lab-row" data-name={row.name} data-status={row.status} className={opened === row.name ? 'ticked' : undefined}>
                <td>
                  <input
                    type="checkbox" checked={compared.includes(row.name)} disabled={row.result === null}
                    onChange={() => void lab.toggleCompare(row.name)} aria-label={`Compare point ${row.index}`} data-testid="lab-compare-toggle"
                  />
                </td>
                {TABLE_COLUMNS.map((column) => (
                  <td key={column.id} className={column.id === 'settings' || column.id === 'status' ? undefined : 'num'} title={column.id === 'status' ? row.reason ?? undefined : undefined}>
                    {column.format(row)}
                  </td>
                ))}
                <td><button type="button" onClick={() => void lab.openPoint(row.name)} disabled={row.result === null} data-testid="lab-open-point">Open</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
