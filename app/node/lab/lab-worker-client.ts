import type { EvalProgress } from '../../lab/evaluate.js';
import type { EvalResult } from '../../lab/eval-result.js';
import type { EvalSettings } from '../../lab/eval-settings.js';
import { LAB_PROTOCOL_VERSION, type LabHostMessage, type LabJobOptions, type LabWorkerMessage, type ReferenceSummary } from '../../lab/lab-protocol.js';
import { parseLabWorkerMessage } from '../../lab/parse-lab-message.js';
import type { RunErrorPayload } from '../../protocol/messages.js';
import { RunError } from '../../protocol/run-error.js';
import { liveWorkerCount, liveWorkerPids, WorkerSupervisor, type SupervisedProtocol, type SupervisorOptions } from '../worker/worker-supervisor.js';

/** How a lab worker starts (a thread or a process, a stand-in engine module for tests, the built entry) and its cancel deadline's floor (worker-supervisor.ts). */
export type LabWorkerOptions = Omit<SupervisorOptions, 'resourceLimits'>;

/** A job on a lab worker: `done` settles once; `cancel` stops it before its next session run. */
export interface LabJob<T> {
  readonly done: Promise<T>;
  cancel(): void;
}

/** The lab worker's protocol (app/lab/lab-protocol.ts) as the supervisor drives it; a job's step is a window, timed between its reports. */
const LAB_WORKER: SupervisedProtocol<LabHostMessage, LabWorkerMessage> = {
  entry: 'lab-worker',
  name: 'lab worker',
  work: 'its job',
  version: LAB_PROTOCOL_VERSION,
  parse: parseLabWorkerMessage,
  requestOf: (message) => (message.type === 'ready' ? undefined : message.id),
  isLast: (message) => message.type === 'evaluated' || message.type === 'referenced' || message.type === 'error',
  cancelMessage: (id) => ({ type: 'cancel', id }),
  delivered: 'Its progress up to its last report was delivered; the job is not recorded.',
  outOfMemoryFix: 'Use a smaller model or a shorter context, or a quantized cache; in a sweep, fewer --jobs (each job holds its own working memory beside the shared weights).',
};

let nextJobId = 1;

/** Lab workers (threads and processes) started and not yet exited (tests check that none is left). */
export function liveLabWorkers(): number {
  return liveWorkerCount('lab-worker');
}

/** The process ids of the live lab worker processes (a sweep's jobs, sweep-job-worker.ts). */
export function liveLabWorkerPids(): number[] {
  return liveWorkerPids('lab-worker');
}

type JobOptions = LabJobOptions & { onProgress?: (progress: EvalProgress) => void };

/**
 * One lab worker (workers/lab-worker.ts, a thread, or a process where `launcher` says so) that takes jobs one after another and keeps its model
 * session warm between them: a sweep runs its points through a few of these. The worker is the
 * supervisor's (worker-supervisor.ts); a worker that is lost (a crash, an exit, stuck after a cancel)
 * fails the job in progress and every later one with that error; `dispose` terminates the worker.
 */
export class LabWorker {
  readonly #supervisor: WorkerSupervisor<LabHostMessage, LabWorkerMessage>;
  #dead: RunErrorPayload | null = null;

  constructor(options: LabWorkerOptions = {}) {
    this.#supervisor = new WorkerSupervisor(LAB_WORKER, options, (error) => {
      this.#dead ??= error;
    });
  }

  get busy(): boolean {
    return this.#supervisor.pending > 0;
  }

  evaluate(settings: EvalSettings, options: JobOptions = {}): LabJob<EvalResult> {
    return this.#start('evaluate', settings, options, (message) => (message.type === 'evaluated' ? message.result : undefined));
  }

  reference(settings: EvalSettings, options: JobOptions = {}): LabJob<ReferenceSummary> {
    return this.#start('reference', settings, options, (message) => (message.type === 'referenced' ? message.reference : undefined));
  }

  async dispose(): Promise<void> {
    this.#dead ??= { code: 'cancelled', message: 'The lab worker was disposed.' };
    await this.#supervisor.dispose({ code: 'cancelled', message: 'The lab worker was disposed before its job finished.' });
  }

  #start<T>(kind: 'evaluate' | 'reference', settings: EvalSettings, options: JobOptions, answer: (message: LabWorkerMessage) => T | undefined): LabJob<T> {
    const id = nextJobId++;
    let resolve!: (value: T) => void;
    let reject!: (error: RunError) => void;
    const done = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
    done.catch(() => undefined);
    if (this.#dead !== null) {
      reject(new RunError(this.#dead));
      return { done, cancel: () => undefined };
    }
    if (this.busy) throw new Error('this lab worker is busy; it runs one job at a time');
    const { onProgress, ...jobOptions } = options;
    let settled = false;
    const fail = (error: RunErrorPayload): void => {
      settled = true;
      reject(new RunError(error));
    };
    this.#supervisor.request(id, { type: kind, id, settings, options: jobOptions }, {
      receive: (message) => {
        if (settled) return;
        if (message.type === 'error') return fail(message.error);
        if (message.type === 'progress') {
          try {
            onProgress?.(message.progress);
          } catch (error) {
            // The caller has its answer; the worker winds the job down.
            fail({ code: 'internal', message: `A progress handler threw: ${(error as Error).message}` });
            this.#supervisor.cancel(id);
          }
          return;
        }
        const value = answer(message);
        if (value !== undefined) {
          settled = true;
          resolve(value);
        }
      },
      fail,
    });
    return { done, cancel: () => this.#supervisor.cancel(id) };
  }
}
