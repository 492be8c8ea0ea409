import type { ReactNode } from 'react';
import { runStatusLabel } from '../../format/run-labels.js';
import { useServices, useWorkbench } from '../../services.js';
import { runBlockedReason } from '../../store/preflight-slice.js';
import { isRunActive } from '../../store/run-slice.js';
import { shortcutLabel } from '../../use-shortcuts.js';

/** Title, the open model, the run's status and the three commands with their shortcuts. */
export function AppHeader(): ReactNode {
  const { controller } = useServices();
  const { modelName, modelStatus, blocked, status, result, error, host } = useWorkbench((s) => ({
    modelName: s.model.summary?.displayName ?? null, modelStatus: s.model.status, blocked: runBlockedReason(s),
    status: s.run.status, result: s.run.result, error: s.run.error, host: s.host,
  }));
  const keys = (command: 'open' | 'run' | 'stop'): ReactNode => shortcutLabel(command, host).split('+').flatMap((key, index) => (index === 0 ? [<kbd key={key}>{key}</kbd>] : ['+', <kbd key={key}>{key}</kbd>]));
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
      {blocked !== null && !active && modelStatus === 'ready' && (
        <button type="button" className="blocked-pill" onClick={() => document.getElementById('run-check')?.scrollIntoView({ block: 'center', behavior: 'smooth' })} title={blocked} data-testid="header-blocked">
          Run disabled: why?
        </button>
      )}
      <nav className="header-actions" aria-label="Commands">
        <button type="button" onClick={() => void controller.openModelDialog()} title={host === 'electron' ? 'Open a model folder' : 'Browse the host\'s folders for a model'} data-testid="open-model-button">
          Open… {keys('open')}
        </button>
        <button type="button" className="primary" disabled={active || blocked !== null} onClick={() => void controller.startRun()} title={blocked ?? 'Run with the settings on the left'} data-testid="run-button">
          Run {keys('run')}
        </button>
        <button type="button" disabled={!active} onClick={() => void controller.cancelRun()} title="Stop the run at its next step" data-testid="stop-button">
          Stop {keys('stop')}
        </button>
      </nav>
    </header>
  );
}
