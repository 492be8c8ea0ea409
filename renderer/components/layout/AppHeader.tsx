import type { ReactNode } from 'react';
import { runStatusLabel } from '../../format/run-labels.js';
import { useServices, useWorkbench } from '../../services.js';
import { isRunActive } from '../../store/run-slice.js';

/** Title, the open model, the run's status and the three commands with their shortcuts. */
export function AppHeader(): ReactNode {
  const { controller } = useServices();
  const { modelName, modelStatus, modelOk, status, result, error } = useWorkbench((s) => ({
    modelName: s.model.summary?.displayName ?? null, modelStatus: s.model.status, modelOk: s.model.summary?.ok === true,
    status: s.run.status, result: s.run.result, error: s.run.error,
  }));
  const run = { status, result, error };
  const active = isRunActive(run.status);
  return (
    <header className="app-header" role="banner">
      <div className="brand">
        <span className="logo" aria-hidden="true">kv</span>
        <h1>kvscope</h1>
        <span className="muted tagline">KV-cache quantization workbench</span>
      </div>
      <div className="header-model" data-testid="header-model" title="The open model">
        {modelStatus === 'loading' ? 'Opening…' : modelName ?? 'No model'}
      </div>
      <div className={`run-pill status-${run.status}`} role="status" data-testid="run-status">{runStatusLabel(run)}</div>
      <nav className="header-actions" aria-label="Commands">
        <button type="button" onClick={() => void controller.openModelDialog()} title="Open a model folder (Ctrl+O)" data-testid="open-model-button">
          Open… <kbd>Ctrl</kbd>+<kbd>O</kbd>
        </button>
        <button type="button" className="primary" disabled={active || !modelOk} onClick={() => void controller.startRun()} title="Run (Ctrl+Enter)" data-testid="run-button">
          Run <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
        </button>
        <button type="button" disabled={!active} onClick={() => void controller.cancelRun()} title="Stop the run (Esc)" data-testid="stop-button">
          Stop <kbd>Esc</kbd>
        </button>
      </nav>
    </header>
  );
}
