import { utilityProcess } from 'electron';
import { fileURLToPath } from 'node:url';
import { workerProcessEnv } from '../../app/node/worker/process-launch.js';
import type { WorkerEntry, WorkerLaunchOptions } from '../../app/node/worker/worker-launch.js';
import type { WorkerEvents, WorkerLauncher, WorkerTransport } from '../../app/node/worker/worker-transport.js';

/**
 * The process launcher of the Electron main process (worker-transport.ts), for a Lab sweep's jobs
 * (app/node/lab/sweep-job-worker.ts). The main process cannot fork Node: the packaged binary's
 * `runAsNode` fuse is off (electron-builder.yml), so `child_process.fork` would start another
 * Electron. Electron's utilityProcess is its way to a Node child: the built lab worker entry
 * (out/node/workers/lab-worker.js, the one the threads run) talks through `process.parentPort`
 * (workers/parent-channel.ts), messages by structured clone. `terminate` is its `kill()` (SIGTERM,
 * which a utility worker does not ignore; Electron reaps it and reports `exit`), sent once it has
 * spawned. Electron reports an exit code only, never the signal, so a job the kernel killed for
 * memory reads as an exit with a code.
 */
export function utilityProcessLauncher(workerEntry: URL): WorkerLauncher {
  return (entryName: WorkerEntry, options: WorkerLaunchOptions, events: WorkerEvents): WorkerTransport => {
    const child = utilityProcess.fork(fileURLToPath(options.workerEntry ?? workerEntry), [], {
      env: workerProcessEnv(options),
      serviceName: `kvscope ${entryName}`,
      // stdin is not supported; the worker's output goes where the app's does
      stdio: 'inherit',
    });
    child.on('message', (message: unknown) => events.message(message));
    child.on('error', (type: string, location: string) => events.error(new Error(`${type} at ${location}`)));
    let ended = false;
    child.once('exit', (code: number) => {
      ended = true;
      events.exit({ code, signal: null });
    });
    return {
      kind: 'process',
      get pid() {
        return child.pid;
      },
      postMessage: (message) => child.postMessage(message),
      terminate: () => {
        if (ended) return;
        // before its spawn there is no process to signal yet
        if (child.pid === undefined) child.once('spawn', () => child.kill());
        else child.kill();
      },
    };
  };
}
