import type { ApiEvent } from '../../protocol/api-messages.js';
import type { LabSweepRequest, LabSweepTicket } from '../../lab/lab-api.js';
import type { LabBackend } from './lab-backend.js';

/**
 * The Lab's one streaming request on the host side of the API transport (app/node/workbench/api-session.ts
 * hands it here; the Lab's other requests go straight to the LabBackend method of their name): a
 * started sweep's events go out tagged with its request id and sweep id.
 */
export function startLabSweep(
  lab: LabBackend, id: number, request: LabSweepRequest, send: (event: ApiEvent) => void, live: Set<string>,
): Promise<LabSweepTicket> {
  return lab.beginSweep(request, (sweepId) => {
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
}
