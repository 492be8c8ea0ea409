import { isMainThread, Worker, type ResourceLimits } from 'node:worker_threads';
import type { GenerationWorkerData } from '../../../workers/generation-worker.js';
import { disableOrtTelemetry } from './ort-telemetry.js';

export interface WorkerLaunchOptions {
  /** a module URL exporting `runGeneration`, in place of the engine (tests) */
  readonly engineModule?: string;
  /** V8 heap limits of the worker; a run that exceeds them ends with `worker-crashed` */
  readonly resourceLimits?: ResourceLimits;
  /**
   * The built worker entry, for hosts whose own code is bundled (the Electron main process): there
   * this module's URL is the bundle's, so the path below would point nowhere.
   */
  readonly workerEntry?: URL;
}

/**
 * Starts workers/generation-worker in a new thread, from whichever form this module runs in:
 * - built (`tsc -p tsconfig.node.json`): out/node/workers/generation-worker.js beside this file's tree;
 * - from source under tsx or vitest: the .ts entry, loaded through tsx's loader. Node 20 does not
 *   apply `--import` hooks given in a worker's execArgv to the worker's own entry (it fails with
 *   ERR_UNKNOWN_FILE_EXTENSION), so a two-line bootstrap registers tsx inside the thread first and
 *   then imports the entry.
 */
export function launchGenerationWorker(options: WorkerLaunchOptions = {}): Worker {
  // Before the thread's first session: ORT's telemetry overflows a worker's stack on a long argv (ort-telemetry.ts).
  if (isMainThread) disableOrtTelemetry();
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(`../../../workers/generation-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  const workerData: GenerationWorkerData = options.engineModule !== undefined ? { engineModule: options.engineModule } : {};
  const common = { workerData, ...(options.resourceLimits !== undefined ? { resourceLimits: options.resourceLimits } : {}) };
  if (options.workerEntry !== undefined) return new Worker(options.workerEntry, common);
  if (!fromSource) return new Worker(entry, common);
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { ...common, eval: true });
}
