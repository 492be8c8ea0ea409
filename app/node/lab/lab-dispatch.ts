import type { ApiEvent, ApiResults } from '../../protocol/api-messages.js';
import type { LabApiRequest } from '../../lab/lab-api-messages.js';
import type { LabBackend } from './lab-backend.js';

/**
 * The Lab's requests on the host side of the API transport (app/node/workbench/api-session.ts hands
 * them here): a started sweep's events go out tagged with its request id and sweep id.
 */
export async function dispatchLab(
  lab: LabBackend, request: LabApiRequest, send: (event: ApiEvent) => void, live: Set<string>,
): Promise<ApiResults[LabApiRequest['type']]> {
  switch (request.type) {
    case 'lab-start-sweep': {
      const id = request.id;
      const ticket = await lab.beginSweep(request.request, (sweepId) => {
        live.add(sweepId);
        return {
          onProgress: (progress) => send({ type: 'lab-sweep-progress', id, sweepId, progress }),
          onPoint: (row) => send({ type: 'lab-sweep-point', id, sweepId, row }),
          onDone: ({ interrupted, results }) => {
            live.delete(sweepId);
            send({ type: 'lab-sweep-done', id, sweepId, interrupted, results });
          },
          onError: (error) => {
            live.delete(sweepId);
            send({ type: 'lab-sweep-error', id, sweepId, error });
          },
        };
      });
      return ticket;
    }
    case 'lab-cancel-sweep':
      await lab.cancelSweep(request.sweepId);
      return null;
    case 'lab-list-sweeps':
      return lab.listSweeps();
    case 'lab-load-sweep':
      return lab.loadSweep(request.sweepId);
    case 'lab-load-point':
      return lab.loadPoint(request.sweepId, request.pointName);
    case 'lab-export-sweep':
      return lab.exportSweep(request.sweepId, request.format);
    default: {
      const unknown: never = request;
      throw new Error(`Unhandled lab request ${JSON.stringify(unknown)}`);
    }
  }
}
