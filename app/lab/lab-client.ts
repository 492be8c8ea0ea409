import type { LabSweepHandlers } from './lab-api.js';
import type { LabApiEvent } from './lab-api-messages.js';

/**
 * The page's side of the Lab's transport, shared by the serve-mode WebSocket client and the Electron
 * preload: a sweep's events go to the handlers registered under the id of the request that started
 * it (before it left). (Results that hold non-finite numbers are read back through the readers their
 * declaration names, lab-api-methods.ts.)
 */
export function deliverLabEvent(sweeps: Map<number, LabSweepHandlers>, event: LabApiEvent): void {
  const handlers = sweeps.get(event.id);
  if (handlers === undefined) return;
  switch (event.type) {
    case 'lab-sweep-progress':
      handlers.onProgress(event.progress);
      return;
    case 'lab-sweep-point':
      handlers.onPoint(event.row);
      return;
    case 'lab-sweep-done':
      sweeps.delete(event.id);
      handlers.onDone({ interrupted: event.interrupted, results: event.results });
      return;
    case 'lab-sweep-error':
      sweeps.delete(event.id);
      handlers.onError(event.error);
      return;
    default: {
      const unknown: never = event;
      throw new Error(`Unhandled lab event ${JSON.stringify(unknown)}`);
    }
  }
}
