import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { RunSettings } from '../engine/types.js';
import type { ApiErrorMessage, ApiRequestType, ApiResultMessage } from './api-messages.js';
import type { ModelSource, RunEventHandlers, RunExportFormat, WorkbenchCommand } from './workbench-api.js';
import type { LabSweepHandlers, LabSweepRequest } from '../lab/lab-api.js';

/**
 * What the Electron preload exposes as `window.kvscope` (contextBridge): one function per capability
 * (STYLE.md §3), never ipcRenderer. Each call resolves with the host's reply envelope rather than
 * rejecting, because an Error crossing contextBridge loses its own fields (`code`, `fix`); the
 * renderer's adapter (renderer/api/bridge-api.ts) turns an `error` reply into an ApiError.
 */
export interface KvscopeBridge {
  readonly host: 'electron';
  readonly protocolVersion: number;
  environment(): Promise<BridgeReply<'environment'>>;
  openModel(source: ModelSource, onnxFile?: string): Promise<BridgeReply<'open-model'>>;
  pickModelFolder(): Promise<BridgeReply<'pick-model-folder'>>;
  preflight(model: ModelSource, settings: QuantizedCacheSettings, options?: { sequenceLengths?: number[] }): Promise<BridgeReply<'preflight'>>;
  checkRun(settings: RunSettings): Promise<BridgeReply<'check-run'>>;
  listFolder(path: string | null, offset?: number): Promise<BridgeReply<'list-folder'>>;
  /** The handlers are registered before the request goes out, so no event can arrive unrouted. */
  startRun(settings: RunSettings, handlers: RunEventHandlers): Promise<BridgeReply<'start-run'>>;
  cancelRun(runId: string): Promise<BridgeReply<'cancel-run'>>;
  listRuns(): Promise<BridgeReply<'list-runs'>>;
  loadRun(runId: string): Promise<BridgeReply<'load-run'>>;
  deleteRun(runId: string): Promise<BridgeReply<'delete-run'>>;
  exportRun(runId: string, format: RunExportFormat): Promise<BridgeReply<'export-run'>>;
  recentModels(): Promise<BridgeReply<'recent-models'>>;
  /** menu commands and dropped folders; returns an unsubscribe function */
  onCommand(listener: (command: WorkbenchCommand) => void): () => void;
  /** the Lab view's sweeps (app/lab/lab-api.ts), one function per capability; a preload without them has no Lab */
  labStartSweep?(request: LabSweepRequest, handlers: LabSweepHandlers): Promise<BridgeReply<'lab-start-sweep'>>;
  labCancelSweep?(sweepId: string): Promise<BridgeReply<'lab-cancel-sweep'>>;
  labListSweeps?(): Promise<BridgeReply<'lab-list-sweeps'>>;
  labLoadSweep?(sweepId: string): Promise<BridgeReply<'lab-load-sweep'>>;
  labLoadPoint?(sweepId: string, pointName: string): Promise<BridgeReply<'lab-load-point'>>;
  labExportSweep?(sweepId: string, format: 'json' | 'csv'): Promise<BridgeReply<'lab-export-sweep'>>;
}

/** The host's reply to one request of type `T`. */
export type BridgeReply<T extends ApiRequestType> = ApiResultMessage<T> | ApiErrorMessage;
