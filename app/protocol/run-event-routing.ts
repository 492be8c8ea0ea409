import type { ApiRunEvent } from './api-messages.js';
import type { RunEventHandlers } from './workbench-api.js';

/**
 * The page's side of a run's events, shared by the Electron preload and the serve-mode WebSocket
 * client (as app/lab/lab-client.ts is for sweeps): each event goes to the handlers registered under
 * the id of the `start-run` request, before it left; `run-done` and `run-error` end the run.
 */
export function deliverRunEvent(runs: Map<number, RunEventHandlers>, event: ApiRunEvent): void {
  const handlers = runs.get(event.id);
  if (handlers === undefined) return;
  switch (event.type) {
    case 'run-text':
      handlers.onText(event.delta, event.tokenIds);
      return;
    case 'run-metrics':
      handlers.onMetrics(event.steps);
      return;
    case 'run-done':
      runs.delete(event.id);
      handlers.onDone(event.result, event.savedRunId);
      return;
    case 'run-error':
      runs.delete(event.id);
      handlers.onError(event.error);
      return;
    default: {
      const unknown: never = event;
      throw new Error(`Unhandled run event ${JSON.stringify(unknown)}`);
    }
  }
}
