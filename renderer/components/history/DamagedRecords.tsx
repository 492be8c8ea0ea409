import { useState, type ReactNode } from 'react';
import type { DamagedRunSummary } from '../../../app/protocol/workbench-api.js';
import { formatBytes } from '../../format/units.js';
import { useServices } from '../../services.js';

/**
 * Files of the runs folder that are not readable records (cut, edited, too large, a link, from a
 * newer kvscope). They once vanished from History with the reason on the host's stderr only; here
 * each says why, and can be exported as it is (when it is a regular file within the cap) or deleted.
 */
export function DamagedRecords({ files }: { files: readonly DamagedRunSummary[] }): ReactNode {
  if (files.length === 0) return null;
  return (
    <section className="damaged-records" data-testid="history-damaged">
      <h3>Damaged files in the runs folder <span className="muted">({files.length})</span></h3>
      <table className="history-table">
        <thead>
          <tr>
            <th scope="col">File</th><th scope="col">Changed</th><th scope="col" className="num">Size</th><th scope="col">Why it cannot be opened</th>
            <th scope="col"><span className="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          {files.map((file) => <DamagedRow key={file.id} file={file} />)}
        </tbody>
      </table>
    </section>
  );
}

function DamagedRow({ file }: { file: DamagedRunSummary }): ReactNode {
  const { controller } = useServices();
  const [confirming, setConfirming] = useState(false);
  return (
    <tr data-testid="history-damaged-row" data-run-id={file.id}>
      <td><code>{file.fileName}</code></td>
      <td><time dateTime={file.modifiedAt}>{new Date(file.modifiedAt).toLocaleString()}</time></td>
      <td className="num">{formatBytes(file.bytes)}</td>
      <td>
        <span data-testid="history-damaged-reason">{file.reason}</span>
        {file.fix !== '' && <div className="muted" data-testid="history-damaged-fix">{file.fix}</div>}
      </td>
      <td className="actions">
        {file.exportable && (
          <button type="button" onClick={() => void controller.exportRun(file.id, 'raw')} data-testid="history-damaged-export">Export file</button>
        )}
        {confirming ? (
          <>
            <button type="button" className="danger" onClick={() => void controller.deleteRun(file.id)} data-testid="history-damaged-delete-confirm">Delete</button>
            <button type="button" onClick={() => setConfirming(false)}>Keep</button>
          </>
        ) : (
          <button type="button" onClick={() => setConfirming(true)} aria-label={`Delete ${file.fileName}`} data-testid="history-damaged-delete">Delete…</button>
        )}
      </td>
    </tr>
  );
}
