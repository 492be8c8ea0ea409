import { ApiError, toApiErrorPayload } from '../../protocol/api-error.js';
import type { ApiEvent, ApiRequest, ApiResponse, ApiResults } from '../../protocol/api-messages.js';
import { NO_REQUEST } from '../../protocol/messages.js';
import { ApiProtocolError, parseApiRequest } from '../../protocol/parse-api-message.js';
import type { RunEventHandlers, RunExport } from '../../protocol/workbench-api.js';
import type { WorkbenchBackend } from './workbench-backend.js';
import { dispatchLab } from '../lab/lab-dispatch.js';

/** What only a host can do: Electron has native dialogs; the serve host answers without them. */
export interface HostCapabilities {
  /** a native folder picker; null when cancelled or when there is none */
  pickModelFolder(): Promise<string | null>;
  /** offers to save an export (Electron's save dialog); resolves with the path written, or null */
  saveExport?(runExport: RunExport): Promise<string | null>;
}

/** The browser has no native dialogs: the UI asks for a path and downloads exports itself. */
export const HEADLESS_HOST: HostCapabilities = { pickModelFolder: async () => null };

/** One connected page: its requests, and the events of the runs it started. */
export interface ApiSession {
  /** Answers one raw request (untrusted: it is validated here); never rejects. */
  handle(raw: unknown): Promise<ApiResponse>;
  /** The page went away: its live runs are stopped and nothing more is sent to it. */
  dispose(): void;
}

/**
 * The host side of the API transport, the same for the Electron IPC handler and the WebSocket
 * server: validate (parse-api-message.ts), dispatch to the backend, answer with `result` or
 * `error`, and stream run events through `emit` tagged with the `start-run` request's id.
 */
export function createApiSession(backend: WorkbenchBackend, host: HostCapabilities, emit: (event: ApiEvent) => void): ApiSession {
  let disposed = false;
  const runs = new Set<string>();
  const sweeps = new Set<string>();
  const send = (event: ApiEvent): void => {
    if (disposed) return;
    try {
      emit(event);
    } catch (error) {
      // The page is going away (a closed socket or window); its session is disposed next.
      console.error(`kvscope: could not send a ${event.type} event: ${(error as Error).message}`);
    }
  };

  const runHandlers = (id: number, runId: string): RunEventHandlers => ({
    onText: (delta, tokenIds) => send({ type: 'run-text', id, runId, delta, tokenIds }),
    onMetrics: (steps) => send({ type: 'run-metrics', id, runId, steps }),
    onDone: (result, savedRunId) => {
      runs.delete(runId);
      send({ type: 'run-done', id, runId, result, savedRunId });
    },
    onError: (error) => {
      runs.delete(runId);
      send({ type: 'run-error', id, runId, error });
    },
  });

  async function dispatch(request: ApiRequest): Promise<ApiResults[ApiRequest['type']]> {
    switch (request.type) {
      case 'environment':
        return backend.environment();
      case 'open-model':
        return backend.openModel(request.source, request.onnxFile);
      case 'pick-model-folder':
        return host.pickModelFolder();
      case 'preflight':
        return backend.preflight(request.model, request.settings, request.sequenceLengths !== undefined ? { sequenceLengths: [...request.sequenceLengths] } : {});
      case 'check-run':
        return backend.checkRun(request.settings);
      case 'list-folder':
        return backend.listFolder(request.path, request.offset);
      case 'start-run': {
        const ticket = backend.beginRun(request.settings, (runId) => runHandlers(request.id, runId));
        runs.add(ticket.runId);
        return ticket;
      }
      case 'cancel-run':
        await backend.cancelRun(request.runId);
        return null;
      case 'list-runs':
        return backend.listRuns();
      case 'load-run':
        return backend.loadRun(request.runId);
      case 'delete-run':
        await backend.deleteRun(request.runId);
        return null;
      case 'export-run': {
        const exported = await backend.exportRun(request.runId, request.format);
        return host.saveExport === undefined ? exported : { ...exported, saved: await host.saveExport(exported) };
      }
      case 'recent-models':
        return backend.recentModels();
      case 'lab-start-sweep':
      case 'lab-cancel-sweep':
      case 'lab-list-sweeps':
      case 'lab-load-sweep':
      case 'lab-load-point':
      case 'lab-export-sweep':
        return dispatchLab(backend.lab, request, send, sweeps);
      default: {
        const unknown: never = request;
        throw new ApiError({ code: 'invalid-request', message: `Unhandled request ${JSON.stringify(unknown)}` });
      }
    }
  }

  return {
    async handle(raw) {
      let request: ApiRequest;
      try {
        request = parseApiRequest(raw);
      } catch (error) {
        const id = error instanceof ApiProtocolError ? error.requestId : NO_REQUEST;
        return { type: 'error', id, error: toApiErrorPayload(error) };
      }
      if (disposed) return { type: 'error', id: request.id, error: { code: 'internal', message: 'This workbench session has closed.' } };
      try {
        return { type: 'result', id: request.id, value: await dispatch(request) };
      } catch (error) {
        return { type: 'error', id: request.id, error: toApiErrorPayload(error) };
      }
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const runId of runs) void backend.cancelRun(runId);
      runs.clear();
      // A sweep the page started stops with it; its complete points stay, and it can be resumed.
      for (const sweepId of sweeps) void backend.lab.cancelSweep(sweepId);
      sweeps.clear();
    },
  };
}
