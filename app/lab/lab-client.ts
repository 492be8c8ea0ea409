import { readObject, type Read } from '../protocol/field-readers.js';
import { readEvalRecord } from './eval-record.js';
import type { LabSweepHandlers } from './lab-api.js';
import { readSweepResults, type LabApiEvent, type LabApiRequest } from './lab-api-messages.js';

/**
 * The page's side of the Lab's transport, shared by the serve-mode WebSocket client and the Electron
 * preload: a sweep's events go to the handlers registered under the id of the request that started
 * it (before it left), and results that hold non-finite numbers are read back through their readers.
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

/** A record may hold `"Infinity"` (an exact reconstruction's SNR): read it back into numbers and check it. */
export function readLabResult(type: LabApiRequest['type'], value: unknown): unknown {
  if (type === 'lab-load-point') return readEvalRecord(value, 'the point the server sent');
  if (type === 'lab-load-sweep') return { ...(value as object), results: readViewResults(value, 'the sweep the server sent') };
  return value;
}

const readViewResults: Read<unknown> = (value, path) => readObject(value, path).get('results', readSweepResults);
