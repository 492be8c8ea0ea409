import type { App } from 'electron';
import type { WorkbenchBackend } from '../../app/node/workbench/workbench-backend.js';

/**
 * Quitting the app (the menu, the last window closed, SIGINT or SIGTERM to the main process) first
 * cancels the runs in flight and waits for them to be saved as cancelled, then quits: Electron's
 * default on a signal is to die at once, and `before-quit` without a wait disposed the runs unsaved.
 */
export function installQuitGuard(
  app: Pick<App, 'on' | 'quit'>,
  backend: () => WorkbenchBackend | undefined,
  signals: Pick<NodeJS.Process, 'on'> = process,
): void {
  let stopped = false;
  let stopping = false;
  app.on('before-quit', (event: { preventDefault(): void }) => {
    const workbench = backend();
    if (stopped || workbench === undefined) return;
    event.preventDefault();
    if (stopping) return;
    stopping = true;
    void workbench.stopRuns()
      .catch((error: unknown) => console.error(`kvscope: could not stop the runs cleanly: ${(error as Error).message}`))
      .then(() => workbench.dispose())
      .finally(() => {
        stopped = true;
        app.quit();
      });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) signals.on(signal, () => app.quit());
}
