import { useState, type DragEvent, type ReactNode } from 'react';
import { useServices, useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { LayerStrip } from './LayerStrip.js';
import { LayerVerdict } from './LayerVerdict.js';
import { ModelSourcePicker } from './ModelSourcePicker.js';
import { ModelSummaryView } from './ModelSummaryView.js';

/**
 * The model: where it comes from, what it is, and, before any run, whether transformers'
 * QuantizedCache would take it. A folder dropped on the panel opens (Electron sends the path as a
 * `model-dropped` command; a browser drop carries a file:// URI only from some file managers).
 */
export function ModelPanel(): ReactNode {
  const { controller, store } = useServices();
  const { status, summary, error, verdict, cacheMode, quantization } = useWorkbench((s) => ({
    status: s.model.status, summary: s.model.summary, error: s.model.error, verdict: s.model.layerVerdict, cacheMode: s.form.cacheMode, quantization: s.form.quantization,
  }));
  const [dragging, setDragging] = useState(false);

  const onDrop = (event: DragEvent<HTMLElement>): void => {
    event.preventDefault();
    setDragging(false);
    // In Electron the preload reads the dropped folder's real path and sends `model-dropped`.
    if (controller.api.host === 'electron') return;
    const path = droppedPath(event.dataTransfer);
    if (path !== null) {
      void controller.openFolderPath(path);
      return;
    }
    store.getState().pushNotice({
      tone: 'info', title: 'Drop a folder from your file manager',
      text: 'This browser does not reveal the folder\'s path. Type or paste the path into the Model folder field instead.',
    });
  };

  return (
    <section
      className={`panel model-panel${dragging ? ' dragging' : ''}`}
      aria-labelledby="model-panel-title"
      data-testid="model-panel"
      onDragOver={(event) => {
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      <h2 id="model-panel-title">Model {status === 'loading' && <span className="spinner" role="status" aria-label="Opening the model" data-testid="model-loading" />}</h2>
      <ModelSourcePicker />
      {error !== null && (
        <div className="callout callout-error" role="alert">
          <strong>The model could not be opened.</strong>
          <ErrorDetails error={error} testId="model-open-error" />
        </div>
      )}
      {summary !== null && <ModelSummaryView summary={summary} />}
      {summary?.config != null && (
        <>
          <h3 className="subhead">Layers</h3>
          <LayerStrip config={summary.config} form={{ cacheMode, quantization }} verdict={verdict} />
          {verdict !== null && <LayerVerdict verdict={verdict} />}
        </>
      )}
      {dragging && <div className="drop-hint" aria-hidden="true">Drop a model folder to open it</div>}
    </section>
  );
}

/** A folder path from a drop: a file:// URI in text/uri-list (Linux file managers), or a plain absolute path. */
export function droppedPath(data: DataTransfer | null): string | null {
  if (data === null) return null;
  const uris = data.getData('text/uri-list').split(/\r?\n/).filter((line) => line.length > 0 && !line.startsWith('#'));
  const uri = uris[0] ?? data.getData('text/plain').trim();
  if (uri.startsWith('file://')) {
    try {
      return decodeURIComponent(new URL(uri).pathname);
    } catch {
      return null;
    }
  }
  return uri.startsWith('/') ? uri : null;
}
