import { useRef, type ReactNode } from 'react';
import type { GenerationResult } from '../../../app/engine/generation-result.js';
import type { RunBuffers } from '../../controller/live-buffers.js';
import { describePrompt, describeRunLine, describeSampling, describeSettings, runExtensions, runStatusLabel, STOP_REASON_LABEL } from '../../format/run-labels.js';
import { formatBytes, formatError, formatPercent, formatTokensPerSecond, storedVsBaselines } from '../../format/units.js';
import { useFrameTask } from '../../metrics/use-frame-task.js';
import { useServices, useWorkbench } from '../../services.js';
import { exportableRunId, isRunActive, notSavedNotice } from '../../store/run-slice.js';
import { withoutDocumentReferences as plain } from '../../format/user-text.js';
import { compactList } from '../common/DiagnosticList.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { ExtensionsBadge } from '../dashboard/ExtensionsBadge.js';
import { kvFormatText } from '../../../app/record/kv-format-text.js';
import { RunDashboard } from '../dashboard/RunDashboard.js';
import { TextPanel } from '../dashboard/TextPanel.js';
import { PathBadge } from '../dashboard/PathBadge.js';
import { expectedPath, ranPath } from '../../format/dequantize-path.js';

/** The run in progress (or the last one): status, errors, headline figures, charts and text. */
export function LiveView(): ReactNode {
  const { controller } = useServices();
  const run = useWorkbench((s) => s.run);
  const buffers = controller.liveBuffers(run.serial);
  const settings = run.settings;
  // the layer map resolves against the model's layers: the run's own count once it ended, else the open model's
  const numLayers = run.result?.model.numLayers ?? (buffers !== null && buffers.layerKinds.length > 0 ? buffers.layerKinds.length : undefined);
  const extensions = settings === null ? [] : runExtensions(settings, numLayers);

  if (run.status === 'idle' || settings === null) {
    return (
      <div className="empty-state" data-testid="live-empty">
        <h2>No run yet</h2>
        <p>Choose a model and settings on the left, then press <strong>Run</strong>. Memory, error and speed charts fill while the model generates.</p>
      </div>
    );
  }
  return (
    <div className="live-view" data-testid="live-view">
      <header className="run-header">
        <div>
          <h2>
            <span className={`status-dot status-${run.status}`} aria-hidden="true" />
            <span data-testid="live-status">{runStatusLabel(run)}</span>
            {run.runId !== null && <span className="muted run-id"> · {run.runId}</span>}
          </h2>
          {/* the run's own model: after opening another one, the run still on screen is not mistaken for it */}
          {buffers !== null && <p className="run-model" data-testid="live-model">{buffers.modelLabel}</p>}
          <p className="muted" data-testid="live-settings">{describeSettings(settings)} · {describeSampling(settings)} · {settings.promptFormat === 'chat' ? 'chat turn · ' : ''}{settings.maxNewTokens} new tokens{settings.reference ? ' · reference lane' : ''}</p>
          <p className="muted run-prompt" data-testid="live-prompt">Prompt: {describePrompt(settings)}{run.result !== null ? ` (${run.result.promptTokenIds.length} tokens as encoded)` : ''}</p>
          <ExtensionsBadge extensions={extensions} testId="live-extensions" />
          <PathBadge label={run.result !== null ? ranPath(run.result) : expectedPath(settings, numLayers)} testId="live-path" />
        </div>
        {buffers !== null && (run.status !== 'error' || buffers.metrics.stepCount > 0) && <RunProgress buffers={buffers} active={isRunActive(run.status)} />}
      </header>
      {run.status === 'error' && run.error !== null && (
        <section className="callout callout-error run-error" role="alert" data-testid="run-error">
          <h3>{run.error.code === 'refused' ? 'The run was refused' : 'The run failed'}</h3>
          <ErrorDetails error={run.error} testId="run-error-details" />
          <p className="muted">The workbench keeps working: change the settings and run again.</p>
        </section>
      )}
      {run.status === 'done' && run.result !== null && <ResultSummary result={run.result} savedRunId={run.savedRunId} exportId={exportableRunId(run)} />}
      {buffers !== null && (run.status !== 'error' || buffers.metrics.stepCount > 0) && (
        <>
          <RunDashboard buffers={buffers} referenceOn={settings.reference} quantized={settings.cacheMode === 'quantized'} identity={{ runId: run.savedRunId ?? run.runId ?? 'live-run', model: buffers.modelLabel, settings: describeRunLine(settings, extensions, run.result !== null ? ranPath(run.result) : expectedPath(settings, numLayers)) }} />
          <TextPanel buffers={buffers} referenceOn={settings.reference} finished={!isRunActive(run.status)} promptIds={settings.promptTokenIds} />
        </>
      )}
    </div>
  );
}

/** Steps done out of max new tokens, drawn on frames. */
function RunProgress({ buffers, active }: { buffers: RunBuffers; active: boolean }): ReactNode {
  const bar = useRef<HTMLProgressElement>(null);
  const label = useRef<HTMLSpanElement>(null);
  const drawn = useRef(-1);
  useFrameTask(() => {
    // Only when steps arrived: the frame loop keeps running after the run (the fps meter).
    if (drawn.current === buffers.metrics.version) return false;
    drawn.current = buffers.metrics.version;
    const done = buffers.metrics.stepCount;
    if (bar.current !== null && bar.current.value !== done) bar.current.value = done;
    if (label.current !== null) label.current.textContent = `${done} / ${buffers.metrics.expectedSteps} steps`;
    return false;
  }, [buffers]);
  return (
    <div className={`run-progress${active ? ' active' : ''}`}>
      <progress ref={bar} max={buffers.metrics.expectedSteps} value={0} aria-label="Steps generated" data-testid="run-progress" />
      <span ref={label} className="muted" data-testid="run-progress-label" />
    </div>
  );
}

/**
 * What the finished run returned: where it was saved (or why not, with the exports still offered by the
 * id the host keeps it under), flushes per layer, bytes, speed, fidelity.
 */
function ResultSummary({ result, savedRunId, exportId }: { result: GenerationResult; savedRunId: string | null; exportId: string | null }): ReactNode {
  const { controller } = useServices();
  const notSaved = savedRunId === null ? notSavedNotice(result) : null;
  const flushCounts = result.flushCounts.filter((count): count is number => count !== null);
  const uniform = flushCounts.length > 0 && flushCounts.every((count) => count === flushCounts[0]);
  const total = result.kvBytesTotal;
  const path = ranPath(result);
  const format = result.settings.cacheMode === 'quantized' ? kvFormatText(result.settings.quantization) : null;
  return (
    <section className="result-summary" aria-label="Run result" data-testid="result-summary">
      <p>
        <strong>{STOP_REASON_LABEL[result.stopReason]}</strong> after {result.generatedTokenIds.length} tokens
        {savedRunId !== null ? <> · saved as <code data-testid="result-run-id">{savedRunId}</code></> : ' · not saved'}
      </p>
      {notSaved !== null && (
        <div className="callout callout-warning" role="status" data-testid="run-not-saved">
          <p data-testid="run-not-saved-message">{plain(notSaved.message)}</p>
          {notSaved.fix !== undefined && <p className="fix" data-testid="run-not-saved-fix"><span className="muted">What to do:</span> {plain(notSaved.fix)}</p>}
        </div>
      )}
      <dl className="facts compact">
        {format !== null && (
          <div className="fact"><dt>KV format</dt><dd data-testid="result-format" title="a serving runtime's write-once KV format: a kvscope extension, not transformers' QuantizedCache">{format} (write-once, kvscope extension)</dd></div>
        )}
        <div className="fact"><dt>Flushes per layer</dt><dd data-testid="result-flushes">{flushCounts.length === 0 ? 'none (no quantized layer)' : uniform ? String(flushCounts[0]) : flushCounts.join(' ')}</dd></div>
        <div className="fact"><dt>Layers with flushes</dt><dd>{compactList(result.flushCounts.flatMap((count, layer) => (count !== null && count > 0 ? [layer] : []))) || '—'}</dd></div>
        <div className="fact"><dt>KV stored</dt><dd data-testid="result-kv">{formatBytes(total.totalBytes)}: {storedVsBaselines(total, result.model.kvDtype)}</dd></div>
        <div className="fact"><dt>Decode</dt><dd>{formatTokensPerSecond(result.timings.decodeTokensPerSecond)} on {result.executionProvider}</dd></div>
        {result.timings.sessionReused !== undefined && (
          <div className="fact"><dt>Session</dt><dd data-testid="result-session" data-reused={String(result.timings.sessionReused)}
            title="The host keeps the sessions of recent settings warm: a rerun, or settings run a moment ago, starts without loading the graph again">
            {result.timings.sessionReused ? 'warm (kept from a recent run)' : 'opened for this run'}, {Math.round(result.timings.loadMs)} ms to load
          </dd></div>
        )}
        {path !== null && <div className="fact"><dt>Dequantized</dt><dd data-testid="result-path" data-path={path.path} title={path.why}>{path.short}</dd></div>}
        {result.reference !== null && (
          <div className="fact"><dt>Reference</dt><dd>mean KL {formatError(result.reference.meanKl)} nats · top-1 {formatPercent(result.reference.top1Agreement)}</dd></div>
        )}
      </dl>
      {exportId !== null && (
        <div className="button-row">
          <button type="button" onClick={() => void controller.exportRun(exportId, 'json')} data-testid="export-json">Export JSON</button>
          <button type="button" onClick={() => void controller.exportRun(exportId, 'csv')} data-testid="export-csv">Export CSV</button>
        </div>
      )}
    </section>
  );
}
