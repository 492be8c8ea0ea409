import type { ReactNode } from 'react';
import type { RunRecord } from '../../../app/record/run-record.js';
import { describePrompt, describeSampling, describeSettings, recordExtensions, recordIdentity, STOP_REASON_LABEL } from '../../format/run-labels.js';
import { useServices, useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { ExtensionsBadge } from '../dashboard/ExtensionsBadge.js';
import { RunDashboard } from '../dashboard/RunDashboard.js';
import { TextPanel } from '../dashboard/TextPanel.js';
import { PathBadge } from '../dashboard/PathBadge.js';
import { ranPath } from '../../format/dequantize-path.js';

/** A saved run, drawn from its record with the same charts as a live run. */
export function SavedRunView(): ReactNode {
  const saved = useWorkbench((s) => s.savedRun);
  if (saved.status === 'loading') return <p className="muted" role="status" data-testid="saved-loading">Loading run {saved.runId}…</p>;
  if (saved.status === 'error' && saved.error !== null) {
    return <div className="callout callout-error" role="alert" data-testid="saved-error"><h2>Run {saved.runId} could not be opened</h2><ErrorDetails error={saved.error} testId="saved-error-details" /></div>;
  }
  if (saved.record === null) return <p className="muted">Open a run from the history.</p>;
  return <SavedRun record={saved.record} />;
}

function SavedRun({ record }: { record: RunRecord }): ReactNode {
  const { controller } = useServices();
  const buffers = controller.savedBuffers(record);
  return (
    <div className="saved-view" data-testid="saved-view" data-run-id={record.id}>
      <header className="run-header">
        <div>
          <h2>Saved run <code>{record.id}</code></h2>
          <p className="muted">
            {record.model.folder} · {record.model.onnxFile} · {describeSettings(record.settings)} · {describeSampling(record.settings)} · {STOP_REASON_LABEL[record.stopReason]} · {new Date(record.createdAt).toLocaleString()} · kvscope {record.kvscopeVersion}, onnxruntime {record.ortVersion}
          </p>
          <p className="muted run-prompt" data-testid="saved-prompt">Prompt: {describePrompt(record.settings)} ({record.promptTokenIds.length} tokens as encoded)</p>
          <ExtensionsBadge extensions={recordExtensions(record)} testId="saved-extensions" />
          <PathBadge label={ranPath(record)} testId="saved-path" />
        </div>
        <div className="button-row">
          <button type="button" onClick={() => void controller.exportRun(record.id, 'json')} data-testid="saved-export-json">Export JSON</button>
          <button type="button" onClick={() => void controller.exportRun(record.id, 'csv')} data-testid="saved-export-csv">Export CSV</button>
        </div>
      </header>
      <RunDashboard buffers={buffers} referenceOn={record.settings.reference} quantized={record.settings.cacheMode === 'quantized'} identity={recordIdentity(record)} />
      <TextPanel buffers={buffers} referenceOn={record.settings.reference} finished promptIds={record.settings.promptTokenIds} />
    </div>
  );
}
