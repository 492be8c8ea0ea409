import type { ApiEvent, ApiRequestBody, ApiRequestType } from '../../app/protocol/api-messages.js';
import { API_PROTOCOL_VERSION } from '../../app/protocol/api-messages.js';
import type { BridgeReply, KvscopeBridge } from '../../app/protocol/kvscope-bridge.js';
import type { RunEventHandlers, WorkbenchCommand } from '../../app/protocol/workbench-api.js';
import { API_EVENT_CHANNEL, API_REQUEST_CHANNEL } from './ipc-channels.js';
import type { LabSweepHandlers } from '../../app/lab/lab-api.js';
import { isLabEventType, type LabApiEvent } from '../../app/lab/lab-api-messages.js';
import { deliverLabEvent } from '../../app/lab/lab-client.js';

/** The part of ipcRenderer the bridge uses; it never leaves this module (STYLE.md §3). */
export interface BridgeIpc {
  invoke(channel: string, message: unknown): Promise<unknown>;
  on(channel: string, listener: (event: unknown, message: unknown) => void): void;
}

/** The bridge and the one thing the preload itself adds: dropped folders, which only it can turn into paths. */
export interface BridgeParts {
  readonly bridge: KvscopeBridge;
  dispatchCommand(command: WorkbenchCommand): void;
}

/**
 * `window.kvscope`: one function per capability over two channels. Requests are numbered here; a
 * run's handlers are registered under its request id before the request leaves, and the events
 * main sends for it (tagged with that id) go to them. Listeners get the message only, never the
 * IpcRendererEvent (Electron security checklist #20). Main is trusted, so its messages are not
 * re-validated here; main validates everything this sends.
 */
export function createKvscopeBridge(ipc: BridgeIpc): BridgeParts {
  let nextId = 1;
  const runs = new Map<number, RunEventHandlers>();
  const sweeps = new Map<number, LabSweepHandlers>();
  const commandListeners = new Set<(command: WorkbenchCommand) => void>();

  const dispatchCommand = (command: WorkbenchCommand): void => {
    for (const listener of [...commandListeners]) listener(command);
  };

  ipc.on(API_EVENT_CHANNEL, (_event, message) => {
    const event = message as ApiEvent;
    if (event.type === 'command') return dispatchCommand(event.command);
    if (isLabEventType(event.type)) return deliverLabEvent(sweeps, event as LabApiEvent);
    const handlers = runs.get(event.id);
    if (handlers === undefined) return;
    switch (event.type) {
      case 'run-text':
        return handlers.onText(event.delta, event.tokenIds);
      case 'run-metrics':
        return handlers.onMetrics(event.steps);
      case 'run-done':
        runs.delete(event.id);
        return handlers.onDone(event.result, event.savedRunId);
      case 'run-error':
        runs.delete(event.id);
        return handlers.onError(event.error);
    }
  });

  function request<T extends ApiRequestType>(body: ApiRequestBody<T> & { readonly type: T }, handlers?: RunEventHandlers, sweep?: LabSweepHandlers): Promise<BridgeReply<T>> {
    const id = nextId++;
    if (handlers !== undefined) runs.set(id, handlers);
    if (sweep !== undefined) sweeps.set(id, sweep);
    return ipc.invoke(API_REQUEST_CHANNEL, { ...body, id }).then(
      (reply) => {
        const answer = reply as BridgeReply<T>;
        if (answer.type === 'error') {
          runs.delete(id);
          sweeps.delete(id);
        }
        return answer;
      },
      (error: unknown) => {
        runs.delete(id);
        sweeps.delete(id);
        return { type: 'error', id, error: { code: 'internal', message: `The main process did not answer: ${(error as Error).message}` } } as const;
      },
    );
  }

  const bridge: KvscopeBridge = {
    host: 'electron',
    protocolVersion: API_PROTOCOL_VERSION,
    environment: () => request({ type: 'environment' }),
    openModel: (source, onnxFile) => request({ type: 'open-model', source, ...(onnxFile !== undefined ? { onnxFile } : {}) }),
    pickModelFolder: () => request({ type: 'pick-model-folder' }),
    preflight: (model, settings, options) =>
      request({ type: 'preflight', model, settings, ...(options?.sequenceLengths !== undefined ? { sequenceLengths: options.sequenceLengths } : {}) }),
    checkRun: (settings) => request({ type: 'check-run', settings }),
    listFolder: (path, offset) => request({ type: 'list-folder', path, ...(offset !== undefined ? { offset } : {}) }),
    startRun: (settings, handlers) => request({ type: 'start-run', settings }, handlers),
    cancelRun: (runId) => request({ type: 'cancel-run', runId }),
    listRuns: () => request({ type: 'list-runs' }),
    loadRun: (runId) => request({ type: 'load-run', runId }),
    deleteRun: (runId) => request({ type: 'delete-run', runId }),
    exportRun: (runId, format) => request({ type: 'export-run', runId, format }),
    recentModels: () => request({ type: 'recent-models' }),
    onCommand: (listener) => {
      commandListeners.add(listener);
      return () => void commandListeners.delete(listener);
    },
    labStartSweep: (sweepRequest, handlers) => request({ type: 'lab-start-sweep', request: sweepRequest }, undefined, handlers),
    labCancelSweep: (sweepId) => request({ type: 'lab-cancel-sweep', sweepId }),
    labListSweeps: () => request({ type: 'lab-list-sweeps' }),
    labLoadSweep: (sweepId) => request({ type: 'lab-load-sweep', sweepId }),
    labLoadPoint: (sweepId, pointName) => request({ type: 'lab-load-point', sweepId, pointName }),
    labExportSweep: (sweepId, format) => request({ type: 'lab-export-sweep', sweepId, format }),
  };
  return { bridge, dispatchCommand };
}
