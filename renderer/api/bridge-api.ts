import { ApiError } from '../../app/protocol/api-error.js';
import type { ApiRequestType, ApiResults } from '../../app/protocol/api-messages.js';
import type { BridgeReply, KvscopeBridge } from '../../app/protocol/kvscope-bridge.js';
import type { WorkbenchApi } from '../../app/protocol/workbench-api.js';

/**
 * WorkbenchApi over the Electron preload's `window.kvscope`. The bridge resolves with reply
 * envelopes (an Error crossing contextBridge would lose `code` and `fix`); here an `error` reply
 * becomes a thrown ApiError again, so both hosts fail the same way.
 */
export function createBridgeApi(bridge: KvscopeBridge): WorkbenchApi {
  return {
    host: 'electron',
    environment: () => unwrap(bridge.environment()),
    openModel: (source, onnxFile) => unwrap(bridge.openModel(source, onnxFile)),
    pickModelFolder: () => unwrap(bridge.pickModelFolder()),
    preflight: (model, settings, options) => unwrap(bridge.preflight(model, settings, options)),
    checkRun: (settings) => unwrap(bridge.checkRun(settings)),
    listFolder: (path, offset) => unwrap(bridge.listFolder(path, offset)),
    startRun: (settings, handlers) => unwrap(bridge.startRun(settings, handlers)),
    cancelRun: async (runId) => void (await unwrap(bridge.cancelRun(runId))),
    listRuns: () => unwrap(bridge.listRuns()),
    loadRun: (runId) => unwrap(bridge.loadRun(runId)),
    deleteRun: async (runId) => void (await unwrap(bridge.deleteRun(runId))),
    exportRun: (runId, format) => unwrap(bridge.exportRun(runId, format)),
    recentModels: () => unwrap(bridge.recentModels()),
    onCommand: (listener) => bridge.onCommand(listener),
    ...labOverBridge(bridge),
  };
}

/** The Lab's functions, where the preload has them (it always does in this build). */
function labOverBridge(bridge: KvscopeBridge): Pick<WorkbenchApi, 'lab'> {
  const { labStartSweep, labCancelSweep, labListSweeps, labLoadSweep, labLoadPoint, labExportSweep } = bridge;
  if (labStartSweep === undefined || labCancelSweep === undefined || labListSweeps === undefined || labLoadSweep === undefined
    || labLoadPoint === undefined || labExportSweep === undefined) return {};
  return {
    lab: {
      startSweep: (request, handlers) => unwrap(labStartSweep(request, handlers)),
      cancelSweep: async (sweepId) => void (await unwrap(labCancelSweep(sweepId))),
      listSweeps: () => unwrap(labListSweeps()),
      loadSweep: (sweepId) => unwrap(labLoadSweep(sweepId)),
      loadPoint: (sweepId, pointName) => unwrap(labLoadPoint(sweepId, pointName)),
      exportSweep: (sweepId, format) => unwrap(labExportSweep(sweepId, format)),
    },
  };
}

async function unwrap<T extends ApiRequestType>(reply: Promise<BridgeReply<T>>): Promise<ApiResults[T]> {
  const answer = await reply;
  if (answer.type === 'error') throw new ApiError(answer.error);
  return answer.value;
}
