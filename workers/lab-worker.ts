import { parentPort, workerData } from 'node:worker_threads';
import type { LabWorkerMessage } from '../app/lab/lab-protocol.js';
import { LabLoop, type LabEngine } from './lab-loop.js';
import { setSweepJobs } from '../app/node/ort/ort-decoder-session.js';

/**
 * The lab worker (a worker_threads entry): evaluations and references for `kvscope eval`, `kvscope
 * sweep` and the workbench's Lab view, one job after another, its session kept warm between them.
 * app/node/lab/lab-worker-client.ts starts it.
 */
export interface LabWorkerData {
  /** URL of a module exporting `runEval` and `ensureReference`; unset in production (the engine beside this file) */
  readonly engineModule?: string;
}

if (parentPort === null) throw new Error('lab-worker runs as a worker thread; start it with LabWorker from app/node/lab/lab-worker-client.ts.');
const port = parentPort;
const data = (workerData ?? {}) as LabWorkerData;

const engine = loadEngine(data.engineModule ?? new URL('../app/node/lab/run-eval.js', import.meta.url).href);
engine.catch(() => undefined); // reported when a job awaits it

const loop = new LabLoop((message: LabWorkerMessage) => port.postMessage(message), () => engine);
port.on('message', (message: unknown) => loop.receive(message));
loop.announce();

async function loadEngine(url: string): Promise<LabEngine> {
  const module = (await import(url)) as Partial<LabEngine>;
  if (typeof module.runEval !== 'function' || typeof module.ensureReference !== 'function') throw new Error(`${url} does not export runEval() and ensureReference().`);
  const { runEval, ensureReference } = module as LabEngine;
  // A job's sweepJobs holds for the sessions it opens: set before the engine opens any.
  return {
    runEval: (settings, options) => (setSweepJobs(options.sweepJobs), runEval(settings, options)),
    ensureReference: (settings, options) => (setSweepJobs(options.sweepJobs), ensureReference(settings, options)),
  };
}
