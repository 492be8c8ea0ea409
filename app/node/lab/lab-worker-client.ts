import { Worker } from 'node:worker_threads';
import type { EvalProgress } from '../../lab/evaluate.js';
import type { EvalResult } from '../../lab/eval-result.js';
import type { EvalSettings } from '../../lab/eval-settings.js';
import { LAB_PROTOCOL_VERSION, type LabHostMessage, type LabJobOptions, type LabWorkerMessage, type ReferenceSummary } from '../../lab/lab-protocol.js';
import { parseLabWorkerMessage } from '../../lab/parse-lab-message.js';
import type { RunErrorPayload } from '../../protocol/messages.js';
import { RunError } from '../../protocol/run-error.js';
import type { LabWorkerData } from '../../../workers/lab-worker.js';

export interface LabWorkerOptions {
  /** a module URL exporting `runEval` and `ensureReference`, in place of the engine (tests) */
  readonly engineModule?: string;
  /** the built worker entry, for hosts whose own code is bundled (see worker-launch.ts) */
  readonly workerEntry?: URL;
  /** how long a cancelled job may take to stop before the worker is terminated (default 10 s); null: never (the CLI, as worker-client.ts says why) */
  readonly cancelTimeoutMs?: number | null;
}

/** A job on a lab worker: `done` settles once; `cancel` stops it before its next session run. */
export interface LabJob<T> {
  readonly done: Promise<T>;
  cancel(): void;
}

type Pending = {
  readonly id: number;
  readonly resolve: (value: never) => void;
  readonly reject: (error: RunError) => void;
  readonly onProgress: ((progress: EvalProgress) => void) | undefined;
  readonly kind: 'evaluate' | 'reference';
};

let nextJobId = 1;
const liveWorkers = new Set<Worker>();

/** Lab worker threads started and not yet exited (tests check that none is left). */
export function liveLabWorkers(): number {
  return liveWorkers.size;
}

/**
 * One lab worker thread (workers/lab-worker.ts) that takes jobs one after another and keeps its model
 * session warm between them: a sweep runs its points through a few of these. A crash fails the job in
 * progress (and every later one) with a RunError; `dispose` terminates the thread.
 */
export class LabWorker {
  readonly #worker: Worker;
  readonly #options: LabWorkerOptions;
  #pending: Pending | null = null;
  #dead: RunErrorPayload | null = null;
  #cancelTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: LabWorkerOptions = {}) {
    this.#options = options;
    this.#worker = launchLabWorker(options);
    liveWorkers.add(this.#worker);
    this.#worker.on('message', (raw: unknown) => this.#receive(raw));
    this.#worker.on('error', (error: Error) => this.#die({ code: 'worker-crashed', message: `The lab worker crashed: ${error.name}: ${error.message}` }));
    this.#worker.once('exit', (code: number) => {
      liveWorkers.delete(this.#worker);
      this.#die({ code: 'worker-crashed', message: `The lab worker exited with code ${code} before its job finished.` });
    });
  }

  get busy(): boolean {
    return this.#pending !== null;
  }

  evaluate(settings: EvalSettings, options: LabJobOptions & { onProgress?: (progress: EvalProgress) => void } = {}): LabJob<EvalResult> {
    return this.#start('evaluate', settings, options);
  }

  reference(settings: EvalSettings, options: LabJobOptions & { onProgress?: (progress: EvalProgress) => void } = {}): LabJob<ReferenceSummary> {
    return this.#start('reference', settings, options);
  }

  async dispose(): Promise<void> {
    this.#fail({ code: 'cancelled', message: 'The lab worker was disposed before its job finished.' });
    this.#dead ??= { code: 'cancelled', message: 'The lab worker was disposed.' };
    this.#worker.removeAllListeners('message');
    await this.#worker.terminate().catch(() => undefined);
  }

  #start<T>(kind: 'evaluate' | 'reference', settings: EvalSettings, options: LabJobOptions & { onProgress?: (progress: EvalProgress) => void }): LabJob<T> {
    const id = nextJobId++;
    let resolve!: (value: T) => void;
    let reject!: (error: RunError) => void;
    const done = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
    done.catch(() => undefined);
    if (this.#dead !== null) {
      reject(new RunError(this.#dead));
      return { done, cancel: () => undefined };
    }
    if (this.#pending !== null) throw new Error('this lab worker is busy; it runs one job at a time');
    this.#pending = { id, kind, resolve: resolve as (value: never) => void, reject, onProgress: options.onProgress };
    const { onProgress: _onProgress, ...jobOptions } = options;
    this.#send({ type: kind, id, settings, options: jobOptions });
    return {
      done,
      cancel: () => {
        if (this.#pending?.id !== id) return;
        this.#send({ type: 'cancel', id });
        if (this.#options.cancelTimeoutMs === null) return;
        this.#cancelTimer ??= setTimeout(() => {
          this.#die({ code: 'cancel-timeout', message: 'The lab worker did not stop after the cancel (a run stuck in native code?), so it was terminated.' });
        }, this.#options.cancelTimeoutMs ?? 10_000);
      },
    };
  }

  #send(message: LabHostMessage): void {
    this.#worker.postMessage(message);
  }

  #receive(raw: unknown): void {
    let message: LabWorkerMessage;
    try {
      message = parseLabWorkerMessage(raw);
    } catch (error) {
      this.#die({ code: 'protocol', message: (error as Error).message });
      return;
    }
    if (message.type === 'ready') {
      if (message.protocolVersion !== LAB_PROTOCOL_VERSION) {
        this.#die({ code: 'protocol', message: `The lab worker speaks protocol ${message.protocolVersion}; this host speaks ${LAB_PROTOCOL_VERSION}.`, fix: 'Rebuild kvscope (npm run build).' });
      }
      return;
    }
    const pending = this.#pending;
    if (pending === null || (message.id !== pending.id && message.id !== 0)) return;
    switch (message.type) {
      case 'progress':
        try {
          pending.onProgress?.(message.progress);
        } catch (error) {
          this.#fail({ code: 'internal', message: `A progress handler threw: ${(error as Error).message}` });
        }
        return;
      case 'evaluated':
        this.#settle(() => pending.resolve(message.result as never));
        return;
      case 'referenced':
        this.#settle(() => pending.resolve(message.reference as never));
        return;
      case 'error':
        this.#fail(message.error);
        return;
      default: {
        const unknown: never = message;
        throw new Error(`Unhandled lab worker message ${JSON.stringify(unknown)}`);
      }
    }
  }

  #settle(outcome: () => void): void {
    clearTimeout(this.#cancelTimer);
    this.#cancelTimer = undefined;
    this.#pending = null;
    outcome();
  }

  #fail(payload: RunErrorPayload): void {
    const pending = this.#pending;
    if (pending !== null) this.#settle(() => pending.reject(new RunError(payload)));
  }

  /** The worker is unusable from now on: its job fails, later ones too, and the thread goes. */
  #die(payload: RunErrorPayload): void {
    this.#dead ??= payload;
    this.#fail(payload);
    this.#worker.removeAllListeners('message');
    void this.#worker.terminate().catch(() => undefined);
  }
}

/** workers/lab-worker from whichever form this module runs in (see worker-launch.ts for the tsx bootstrap). */
function launchLabWorker(options: LabWorkerOptions): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(`../../../workers/lab-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  const workerData: LabWorkerData = options.engineModule !== undefined ? { engineModule: options.engineModule } : {};
  if (options.workerEntry !== undefined) return new Worker(options.workerEntry, { workerData });
  if (!fromSource) return new Worker(entry, { workerData });
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { workerData, eval: true });
}
