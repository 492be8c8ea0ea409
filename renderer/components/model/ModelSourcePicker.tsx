import { useEffect, useId, useRef, type ReactNode } from 'react';
import type { ModelSource } from '../../../app/protocol/workbench-api.js';
import { useServices, useWorkbench } from '../../services.js';
import { sameSource, sourceLabel } from '../../store/model-slice.js';

/** Synthetic models, a folder (native picker in Electron, a path field everywhere) and the recent list. */
export function ModelSourcePicker(): ReactNode {
  const { controller, store } = useServices();
  const { host, source, loading, draft, recent, focusRequest } = useWorkbench((s) => ({
    host: s.host, source: s.model.source, loading: s.model.status === 'loading', draft: s.modelPathDraft, recent: s.recentModels, focusRequest: s.focusRequest,
  }));
  const pathId = useId();
  const pathInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (focusRequest?.target === 'model-path') {
      pathInput.current?.focus();
      pathInput.current?.select();
    }
  }, [focusRequest]);

  const synthetic = (kind: 'synthetic' | 'synthetic-hybrid', label: string, detail: string): ReactNode => {
    const active = sameSource(source, { kind });
    return (
      <button
        type="button"
        className={`source-button${active ? ' active' : ''}`}
        aria-pressed={active}
        disabled={loading}
        onClick={() => void controller.openModel({ kind })}
        data-testid={`open-${kind}`}
      >
        <strong>{label}</strong>
        <span className="muted">{detail}</span>
      </button>
    );
  };

  return (
    <div className="source-picker">
      <div className="source-row" role="group" aria-label="Embedded synthetic models">
        {synthetic('synthetic', 'synthetic', '8 full-attention layers')}
        {synthetic('synthetic-hybrid', 'synthetic-hybrid', 'sliding + full attention')}
      </div>
      <form
        className="path-form"
        onSubmit={(event) => {
          event.preventDefault();
          void controller.openFolderPath(draft);
        }}
      >
        <label htmlFor={pathId}>Model folder</label>
        <div className="path-row">
          <input
            id={pathId}
            ref={pathInput}
            type="text"
            spellCheck={false}
            autoComplete="off"
            placeholder="/path/to/model, its config.json or an .onnx file"
            value={draft}
            onChange={(event) => store.getState().setModelPathDraft(event.target.value)}
            data-testid="model-path-input"
          />
          <button type="submit" disabled={loading} data-testid="model-path-open">Open</button>
          <button type="button" disabled={loading} onClick={() => void controller.openModelDialog()} data-testid="pick-folder"
            title={host === 'electron' ? 'Choose a folder' : 'Browse the host\'s folders'}>
            Browse…
          </button>
        </div>
      </form>
      {recent.length > 0 && (
        <RecentModels recent={recent} current={source} onOpen={(s) => void controller.openModel(s)} disabled={loading} />
      )}
    </div>
  );
}

function RecentModels({ recent, current, onOpen, disabled }: { recent: readonly ModelSource[]; current: ModelSource | null; onOpen: (source: ModelSource) => void; disabled: boolean }): ReactNode {
  return (
    <details className="recent">
      <summary>Recent models ({recent.length})</summary>
      <ul data-testid="recent-models">
        {recent.map((item) => (
          <li key={JSON.stringify(item)}>
            <button type="button" className="link-button" disabled={disabled || sameSource(item, current)} onClick={() => onOpen(item)} title={sourceLabel(item)} data-testid="recent-model">
              {sourceLabel(item)}
            </button>
          </li>
        ))}
      </ul>
    </details>
  );
}
