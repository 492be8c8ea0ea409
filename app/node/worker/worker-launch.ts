import { isMainThread, Worker, type ResourceLimits } from 'node:worker_threads';
import { disableOrtTelemetry } from './ort-telemetry.js';
import type { WorkerEvents, WorkerTransport } from './worker-transport.js';

/** The worker threads kvscope starts: workers/generation-worker.ts (runs) and workers/lab-worker.ts (evaluations). */
export type WorkerEntry = 'generation-worker' | 'lab-worker';

export interface WorkerLaunchOptions {
  /** a module URL in place of the engine (tests): `runGeneration` for a generation worker, `runEval` and `ensureReference` for a lab worker */
  readonly engineModule?: string;
  /** V8 heap limits of the worker; a run that exceeds them ends with `worker-crashed` */
  readonly resourceLimits?: ResourceLimits;
  /**
   * The built worker entry, for hosts whose own code is bundled (the Electron main process): there
   * this module's URL is the bundle's, so the path below would point nowhere.
   */
  readonly workerEntry?: URL;
}

/** What both workers read from workerData, or a process worker from its argument (workers/parent-channel.ts). */
export interface WorkerData {
  readonly engineModule?: string;
}

/** The thread launcher (worker-transport.ts): the supervisor's default. */
export function launchThread(entryName: WorkerEntry, options: WorkerLaunchOptions, events: WorkerEvents): WorkerTransport {
  const worker = launchWorker(entryName, options);
  worker.on('message', (raw: unknown) => events.message(raw));
  worker.on('error', (error: Error) => events.error(error));
  worker.on('messageerror', (error: Error) => events.messageError(error));
  worker.once('exit', (code: number) => events.exit({ code, signal: null }));
  return {
    kind: 'thread',
    pid: undefined,
    postMessage: (message) => worker.postMessage(message),
    // Its exit event follows; a terminate that fails leaves nothing more to do.
    terminate: () => void worker.terminate().catch(() => undefined),
  };
}

/**
 * Starts workers/<entry> in a new thread, from whichever form this module runs in:
 * - built (`tsc -p tsconfig.node.json`): out/node/workers/<entry>.js beside this file's tree;
 * - from source under tsx or vitest: the .ts entry, loaded through tsx's loader. Node 20 does not
 *   apply `--import` hooks given in a worker's execArgv to the worker's own entry (it fails with
 *   ERR_UNKNOWN_FILE_EXTENSION), so a two-line bootstrap registers tsx inside the thread first and
 *   then imports the entry.
 */
export function launchWorker(entryName: WorkerEntry, options: WorkerLaunchOptions = {}): Worker {
  // Before the thread's first session: ORT's telemetry overflows a worker's stack on a long argv (ort-telemetry.ts).
  if (isMainThread) disableOrtTelemetry();
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(`../../../workers/${entryName}.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  const workerData: WorkerData = options.engineModule !== undefined ? { engineModule: options.engineModule } : {};
  const common = { workerData, ...(options.resourceLimits !== undefined ? { resourceLimits: options.resourceLimits } : {}) };
  if (options.workerEntry !== undefined) return new Worker(options.workerEntry, common);
  if (!fromSource) return new Worker(entry, common);
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { ...common, eval: true });
}
