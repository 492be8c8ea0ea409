import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import type { WorkerMessage } from '../app/protocol/messages.js';
import { GenerationLoop, type Engine } from './generation-loop.js';

/**
 * The generation worker (a worker_threads entry). It runs app/node/run-generation.ts off the host's
 * thread and reports through the typed protocol in app/protocol. app/node/worker/warm-worker.ts keeps
 * one alive that warms the open model and takes run after run; worker-client.ts starts one per run
 * where none is free (and for WebGPU: only one may create a WebGPU session at a time, two at once
 * segfault onnxruntime-node; the client enforces that).
 */
export interface GenerationWorkerData {
  /**
   * URL of a module exporting `runGeneration`. Unset in production (the engine beside this file);
   * tests name a stand-in that emits steps, throws, hangs or crashes the thread.
   */
  readonly engineModule?: string;
}

if (parentPort === null) throw new Error('generation-worker runs as a worker thread; start it with startRun() from app/node/worker/worker-client.ts.');
const port = parentPort;
const data = (workerData ?? {}) as GenerationWorkerData;

// Start loading the engine (onnxruntime-node, the tokenizer library) now, while the host sends `start`.
const engine = loadEngine(data.engineModule ?? new URL('../app/node/run-generation.js', import.meta.url).href);
engine.catch(() => undefined); // reported when a run awaits it

const loop = new GenerationLoop((message: WorkerMessage) => port.postMessage(message), () => engine, {
  now: () => performance.now(),
  schedule: (callback, delayMs) => {
    const timer = setTimeout(callback, delayMs);
    return () => clearTimeout(timer);
  },
});
port.on('message', (message: unknown) => loop.receive(message));
loop.announce();

async function loadEngine(url: string): Promise<Engine> {
  const module = (await import(url)) as { runGeneration?: unknown; warmModel?: unknown };
  if (typeof module.runGeneration !== 'function') throw new Error(`${url} does not export runGeneration().`);
  return typeof module.warmModel === 'function'
    ? { runGeneration: module.runGeneration as Engine['runGeneration'], warmModel: module.warmModel as NonNullable<Engine['warmModel']> }
    : { runGeneration: module.runGeneration as Engine['runGeneration'] };
}
