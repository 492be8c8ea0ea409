import type { LabWorkerMessage } from '../app/lab/lab-protocol.js';
import { LabLoop, type LabEngine } from './lab-loop.js';
import { parentChannel } from './parent-channel.js';
import { setSweepJobs } from '../app/node/ort/ort-decoder-session.js';

/**
 * The lab worker: evaluations and references for `kvscope eval`, `kvscope sweep` and the workbench's
 * Lab view, one job after another, its session kept warm between them. app/node/lab/lab-worker-client.ts
 * starts it as a thread, or, for a sweep with several jobs, as a process of its own
 * (app/node/lab/sweep-job-worker.ts); parent-channel.ts hides which.
 */
export interface LabWorkerData {
  /** URL of a module exporting `runEval` and `ensureReference`; unset in production (the engine beside this file) */
  readonly engineModule?: string;
}

const channel = parentChannel();
if (channel === null) throw new Error('lab-worker runs as a worker thread or a worker process; start it with LabWorker from app/node/lab/lab-worker-client.ts.');
const data: LabWorkerData = channel.data;

const engine = loadEngine(data.engineModule ?? new URL('../app/node/lab/run-eval.js', import.meta.url).href);
engine.catch(() => undefined); // reported when a job awaits it

const loop = new LabLoop((message: LabWorkerMessage) => channel.post(message), () => engine);
channel.onMessage((message: unknown) => loop.receive(message));
loop.announce();

async function loadEngine(url: string): Promise<LabEngine> {
  const module = (await import(url)) as Partial<LabEngine>;
  if (typeof module.runEval !== 'function' || typeof module.ensureReference !== 'function') throw new Error(`${url} does not export runEval() and ensureReference().`);
  const { runEval, ensureReference } = module as LabEngine;
  // A job's sweepJobs holds for the sessions it opens (this thread's, or this process's): set before the engine opens any.
  return {
    runEval: (settings, options) => (setSweepJobs(options.sweepJobs), runEval(settings, options)),
    ensureReference: (settings, options) => (setSweepJobs(options.sweepJobs), ensureReference(settings, options)),
  };
}
