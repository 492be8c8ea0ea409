import { useEffect, useRef, type KeyboardEvent, type ReactNode } from 'react';
import type { FolderEntry } from '../../../app/protocol/workbench-api.js';
import { useServices, useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';

const KIND_LABEL: Readonly<Record<FolderEntry['kind'], string>> = { folder: 'folder', model: 'model folder', config: 'config.json', onnx: 'ONNX graph' };

/**
 * The browser's "Open…": the host's own folders, listed by the host (a page cannot see the server's
 * disk), starting at its home and the recent models' folders. A model folder, its config.json or an
 * .onnx file opens as the path field would open it; what the host refuses to list says why.
 */
export function FolderBrowser(): ReactNode {
  const { controller } = useServices();
  const { open, loading, listing, error } = useWorkbench((s) => s.folderBrowser);
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (open) dialog.current?.focus();
  }, [open]);
  if (!open) return null;

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>): void => {
    if (event.key !== 'Escape') return;
    // handled here, so the window's Esc (Stop) does not also fire
    event.preventDefault();
    event.stopPropagation();
    controller.closeFolderBrowser();
  };

  return (
    <div className="modal-backdrop" onMouseDown={(event) => { if (event.target === event.currentTarget) controller.closeFolderBrowser(); }}>
      <div className="modal folder-browser" role="dialog" aria-modal="true" aria-labelledby="folder-browser-title" tabIndex={-1} ref={dialog} onKeyDown={onKeyDown} data-testid="folder-browser">
        <header className="modal-header">
          <h2 id="folder-browser-title">Open a model on the host</h2>
          <button type="button" className="icon-button" onClick={() => controller.closeFolderBrowser()} aria-label="Close" data-testid="folder-browser-close">×</button>
        </header>
        <p className="muted">The folders of the machine kvscope serves from. Open a model folder (with config.json), its config.json, or an .onnx graph.</p>
        {listing !== null && (
          <div className="places" role="group" aria-label="Places">
            {listing.places.map((place) => (
              <button type="button" key={place.path} className="place" onClick={() => void controller.browseFolder(place.path)} title={place.path} data-testid="folder-place">{place.label}</button>
            ))}
          </div>
        )}
        <div className="folder-path-row">
          <button type="button" disabled={listing?.parent == null || loading} onClick={() => listing?.parent != null && void controller.browseFolder(listing.parent)} data-testid="folder-up" title="The folder above">↑ Up</button>
          <code className="folder-path" data-testid="folder-path">{listing?.path ?? '…'}</code>
          {loading && <span className="spinner" role="status" aria-label="Listing the folder" />}
        </div>
        {error !== null && <div className="callout callout-error" role="alert"><ErrorDetails error={error} testId="folder-error" /></div>}
        {listing !== null && (
          <ul className="folder-entries" data-testid="folder-entries">
            {listing.entries.length === 0 && <li className="muted">No folders, config.json or .onnx files here.</li>}
            {listing.entries.map((entry) => (
              <li key={entry.path} className={`folder-entry kind-${entry.kind}`} data-testid="folder-entry" data-kind={entry.kind} data-name={entry.name}>
                {entry.kind === 'folder' || entry.kind === 'model' ? (
                  <button type="button" className="link-button entry-name" onClick={() => void controller.browseFolder(entry.path)} title={entry.path}>{entry.name}/</button>
                ) : (
                  <span className="entry-name" title={entry.path}>{entry.name}</span>
                )}
                <span className="muted entry-kind">{KIND_LABEL[entry.kind]}</span>
                {entry.kind !== 'folder' && (
                  <button type="button" className="primary small" onClick={() => void controller.openBrowsedPath(entry.path)} data-testid="folder-entry-open">Open</button>
                )}
              </li>
            ))}
            {listing.total > listing.entries.length && (
              <li className="muted" data-testid="folder-progress">
                Listed {(listing.offset + listing.entries.length).toLocaleString('en-US')} of {listing.total.toLocaleString('en-US')} entries.{' '}
                {listing.truncated && <button type="button" className="link-button" disabled={loading} onClick={() => void controller.browseMoreOfFolder()} data-testid="folder-more">List more</button>}
              </li>
            )}
          </ul>
        )}
        <footer className="modal-footer">
          <button type="button" onClick={() => controller.closeFolderBrowser()}>Cancel</button>
          <button type="button" className="primary" disabled={listing === null || !listing.isModel} onClick={() => listing !== null && void controller.openBrowsedPath(listing.path)} data-testid="folder-open-this"
            title={listing?.isModel === true ? undefined : 'This folder holds no config.json or onnx/ folder'}>
            Open this folder
          </button>
        </footer>
      </div>
    </div>
  );
}
