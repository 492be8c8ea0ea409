import type { ModelDiagnostic } from '../engine/model-diagnostic.js';

/**
 * What a host says when a convenience of its data folder failed (recent models, saving a run): a
 * notice, never an error of the model or the run. The Node backend and the renderer's fake engine use
 * the same words.
 */
export function dataFolderNotice(message: string): ModelDiagnostic {
  return {
    code: 'data-folder-unwritable', severity: 'info', origin: 'kvscope', message, layers: [],
    fix: 'Make the data folder writable, or choose another with KVSCOPE_DATA_DIR (kvscope serve: --data-dir).',
  };
}

/** A run that finished but could not be saved: its result is shown, and the host keeps it by `runId` for the session. */
export function runNotSavedNotice(runId: string, reason: string): ModelDiagnostic {
  return {
    ...dataFolderNotice(`This run could not be saved to the history: ${reason} Its result is shown here and can still be exported (run ${runId}) until the workbench closes.`),
    code: 'run-not-saved',
  };
}
