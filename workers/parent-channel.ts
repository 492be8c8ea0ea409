import { parentPort, workerData } from 'node:worker_threads';
import type { WorkerData } from '../app/node/worker/worker-launch.js';
import { disableOrtTelemetry } from '../app/node/worker/ort-telemetry.js';
import { WORKER_DATA_VARIABLE } from '../app/node/worker/process-launch.js';

/** How a worker entry talks to its host, whichever way it was started. */
export interface ParentChannel {
  readonly kind: 'thread' | 'process';
  readonly data: WorkerData;
  post(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
}

/** Electron's utility process side (`process.parentPort`, absent from Node's types). */
interface UtilityParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}

/**
 * The channel of a worker entry (workers/lab-worker.ts) started as a thread (worker-launch.ts), a
 * Node child process (app/node/worker/process-launch.ts: `process.send`) or an Electron utility
 * process (main/electron/utility-process-launch.ts: `process.parentPort`). A process worker first
 * becomes one: see `asWorkerProcess`. Null: started as none of these (run by hand).
 */
export function parentChannel(): ParentChannel | null {
  if (parentPort !== null) {
    const port = parentPort;
    return {
      kind: 'thread',
      data: (workerData ?? {}) as WorkerData,
      post: (message) => port.postMessage(message),
      onMessage: (listener) => void port.on('message', listener),
    };
  }
  const utility = (process as { parentPort?: UtilityParentPort }).parentPort;
  if (utility !== undefined) {
    // Electron's utilityProcess: its kill() (the host's terminate) is SIGTERM, so that one is honoured.
    asWorkerProcess(['SIGINT']);
    return {
      kind: 'process',
      data: workerDataFromEnv(),
      post: (message) => utility.postMessage(message),
      onMessage: (listener) => utility.on('message', (event) => listener(event.data)),
    };
  }
  const send = process.send?.bind(process);
  if (send === undefined) return null;
  asWorkerProcess(['SIGINT', 'SIGTERM']);
  process.on('disconnect', () => process.exit(0));
  return {
    kind: 'process',
    data: workerDataFromEnv(),
    // A send to a host that is gone fails with ERR_IPC_CHANNEL_CLOSED: the disconnect above ends the process.
    post: (message) => void send(message, undefined, undefined, () => undefined),
    onMessage: (listener) => void process.on('message', listener),
  };
}

/**
 * What a worker process does before anything else. It ignores `signals`: a terminal's Ctrl-C
 * (SIGINT) and `timeout`'s or Slurm's TERM reach the whole process group, and the host coordinates
 * the stop (its jobs cancelled at their next window, the sweep's records whole), then ends its
 * workers itself (Node's: SIGKILL). ORT's telemetry is off before its first session, as in every
 * host (ort-telemetry.ts; the launchers set it in the environment too).
 */
function asWorkerProcess(signals: readonly NodeJS.Signals[]): void {
  for (const signal of signals) process.on(signal, () => undefined);
  disableOrtTelemetry();
}

/** The workerData the launchers put in the environment (process-launch.ts workerProcessEnv), removed so no process of this one's inherits it. */
function workerDataFromEnv(): WorkerData {
  const text = process.env[WORKER_DATA_VARIABLE];
  delete process.env[WORKER_DATA_VARIABLE];
  if (text === undefined) return {};
  const data = JSON.parse(text) as WorkerData;
  return typeof data.engineModule === 'string' ? { engineModule: data.engineModule } : {};
}
