import type { RunSettings } from '../../engine/types.js';
import type { HostMessage, RequestId, WarmTarget, WorkerMessage } from '../../protocol/messages.js';
import { RunError } from '../../protocol/run-error.js';
import type { RunHandle, RunHandlers } from '../../protocol/run-handle.js';
import { GENERATION_WORKER, GenerationRun } from './generation-run.js';
import { WorkerSupervisor, type SupervisorOptions } from './worker-supervisor.js';

export interface WarmWorkerOptions extends SupervisorOptions {
  /** runs a worker takes before it is replaced by a fresh one (its heap and native arenas start over) */
  readonly recycleAfterRuns?: number;
}

/** Request ids of the warm worker; apart from worker-client.ts's, which number per-run workers. */
let nextId = 1_000_000_000;

const RECYCLED = { code: 'worker-crashed', message: 'The generation worker was replaced (recycled) before it answered.' } as const;

/**
 * One generation worker kept alive between runs ("warm sessions", shared/reference/seams.md): opening
 * a model warms it (files, tokenizer and ORT session loaded in the worker, kept by its session cache),
 * and the next run on it starts without starting a thread, loading onnxruntime or creating a session.
 * It takes one run at a time: `tryStart` answers null while it is busy, and the caller starts a
 * one-off worker instead (worker-client.ts). The thread is the supervisor's (worker-supervisor.ts): a
 * worker that crashes, exits, or does not honour a cancel in time fails its run with a clear error
 * and is replaced on next use; the host stays up. After `recycleAfterRuns` runs it is replaced too,
 * so a long session does not accumulate native memory. WebGPU runs never come here: they keep one
 * worker per run behind the WebGPU gate.
 */
export class WarmGenerationWorker {
  readonly #supervisor: WorkerSupervisor<HostMessage, WorkerMessage>;
  #busy: GenerationRun | null = null;
  #runs = 0;
  #disposed = false;

  constructor(private readonly options: WarmWorkerOptions = {}) {
    // A lost worker starts over: its next run is the first on a fresh thread.
    this.#supervisor = new WorkerSupervisor(GENERATION_WORKER, options, () => {
      this.#runs = 0;
    });
  }

  /** Whether a run is under way on it (a run disposed early keeps it busy until the worker has wound it down). */
  get busy(): boolean {
    return this.#busy !== null;
  }

  /** Loads a model for its next run; resolves with the milliseconds the worker spent (0: it was warm). */
  warm(target: WarmTarget): Promise<number> {
    if (this.#disposed) return Promise.reject(new RunError({ code: 'internal', message: 'The warm worker was disposed.' }));
    const id = nextId++;
    return new Promise<number>((resolve, reject) => {
      this.#supervisor.request(id, { type: 'warm', id, target }, {
        receive: (message) => {
          if (message.type === 'warmed') resolve(message.loadMs);
          else if (message.type === 'error') reject(new RunError(message.error));
        },
        fail: (error) => reject(new RunError(error)),
      });
    });
  }

  /** Starts a run on the warm worker, or returns null when it is busy with another (or disposed). */
  tryStart(settings: RunSettings, handlers: RunHandlers = {}): RunHandle | null {
    if (this.#disposed || this.#busy !== null || settings.executionProvider === 'webgpu') return null;
    if (this.#runs >= (this.options.recycleAfterRuns ?? Infinity)) this.recycle();
    const id: RequestId = nextId++;
    const run = new GenerationRun(id, handlers, {
      cancel: () => this.#supervisor.cancel(id),
      // a disposed run's worker that is still on it after the cancel deadline is stuck: replace it
      dispose: () => this.#supervisor.abandon(id),
    });
    this.#busy = run;
    this.#runs++;
    // The worker is free once it has said its last word on the run, or is gone.
    const free = (): void => {
      if (this.#busy === run) this.#busy = null;
    };
    this.#supervisor.request(id, { type: 'start', id, settings }, {
      receive: (message) => {
        if (GENERATION_WORKER.isLast(message)) free();
        run.receive(message);
      },
      fail: (error) => {
        free();
        run.fail(error);
      },
    });
    return run;
  }

  /** Terminates the worker (its sessions go with it); the next warm-up or run starts a fresh one. */
  recycle(): void {
    this.#runs = 0;
    this.#supervisor.replace(RECYCLED);
  }

  async dispose(): Promise<void> {
    this.#disposed = true;
    await this.#supervisor.dispose(RECYCLED);
  }
}
