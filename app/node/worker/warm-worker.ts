import type { Worker } from 'node:worker_threads';
import type { GenerationResult } from '../../engine/generation-result.js';
import type { RunSettings } from '../../engine/types.js';
import { PROTOCOL_VERSION, type RequestId, type RunErrorPayload, type WarmTarget, type WorkerMessage } from '../../protocol/messages.js';
import { parseWorkerMessage } from '../../protocol/parse-message.js';
import { RunError } from '../../protocol/run-error.js';
import type { RunHandle, RunHandlers } from '../../protocol/run-handle.js';
import { DEFAULT_CANCEL_TIMEOUT_MS, trackGenerationWorker } from './worker-client.js';
import { CancelDeadline } from './cancel-deadline.js';
import { launchGenerationWorker, type WorkerLaunchOptions } from './worker-launch.js';

export interface WarmWorkerOptions extends WorkerLaunchOptions {
  /** how long a cancelled run may take to stop before the worker is terminated (and replaced); null: never (worker-client.ts says why) */
  readonly cancelTimeoutMs?: number | null;
  /** runs a worker takes before it is replaced by a fresh one (its heap and native arenas start over) */
  readonly recycleAfterRuns?: number;
}

/** Request ids of the warm worker; apart from worker-client.ts's, which number per-run workers. */
let nextId = 1_000_000_000;

/** A request the worker is answering: a warm-up, or a run. */
type Pending =
  | { readonly kind: 'warm'; readonly id: RequestId; resolve(loadMs: number): void; reject(error: RunError): void }
  | { readonly kind: 'run'; readonly id: RequestId; readonly run: WarmRun };

/**
 * One generation worker kept alive between runs ("warm sessions", shared/reference/seams.md): opening
 * a model warms it (files, tokenizer and ORT session loaded in the worker, kept by its session cache),
 * and the next run on it starts without starting a thread, loading onnxruntime or creating a session.
 * It takes one run at a time: `tryStart` answers null while it is busy, and the caller starts a
 * one-off worker instead (worker-client.ts). A worker that crashes, exits, or does not honour a cancel
 * in time fails its run with a clear error and is replaced on next use; the host stays up. After
 * `recycleAfterRuns` runs it is replaced too, so a long session does not accumulate native memory.
 * WebGPU runs never come here: they keep one worker per run behind the WebGPU gate.
 */
export class WarmGenerationWorker {
  #worker: Worker | null = null;
  #exited: Promise<void> = Promise.resolve();
  #pending = new Map<RequestId, Pending>();
  #busy: WarmRun | null = null;
  #runs = 0;
  #disposed = false;

  constructor(private readonly options: WarmWorkerOptions = {}) {}

  /** Whether a run is under way on it. */
  get busy(): boolean {
    return this.#busy !== null;
  }

  /** Loads a model for its next run; resolves with the milliseconds the worker spent (0: it was warm). */
  warm(target: WarmTarget): Promise<number> {
    if (this.#disposed) return Promise.reject(new RunError({ code: 'internal', message: 'The warm worker was disposed.' }));
    const worker = this.#ensureWorker();
    const id = nextId++;
    return new Promise<number>((resolve, reject) => {
      this.#pending.set(id, { kind: 'warm', id, resolve, reject });
      worker.postMessage({ type: 'warm', id, target });
    });
  }

  /** Starts a run on the warm worker, or returns null when it is busy with another (or disposed). */
  tryStart(settings: RunSettings, handlers: RunHandlers = {}): RunHandle | null {
    if (this.#disposed || this.#busy !== null || settings.executionProvider === 'webgpu') return null;
    if (this.#runs >= (this.options.recycleAfterRuns ?? Infinity)) this.recycle();
    const worker = this.#ensureWorker();
    const id = nextId++;
    const run = new WarmRun(id, handlers, this.options.cancelTimeoutMs ?? DEFAULT_CANCEL_TIMEOUT_MS, {
      cancel: () => worker.postMessage({ type: 'cancel', id }),
      stuck: () => this.recycle(),
      // a disposed run's worker that is still on it after the cancel timeout is stuck: replace it
      windDown: (timeoutMs) => {
        const timer = setTimeout(() => {
          if (this.#busy === run) this.recycle();
        }, timeoutMs);
        timer.unref();
      },
    });
    this.#busy = run;
    this.#runs++;
    this.#pending.set(id, { kind: 'run', id, run });
    worker.postMessage({ type: 'start', id, settings });
    return run;
  }

  /** Terminates the worker (its sessions go with it); the next warm-up or run starts a fresh one. */
  recycle(): void {
    const worker = this.#worker;
    if (worker === null) return;
    this.#worker = null;
    this.#runs = 0;
    this.#failAll({ code: 'worker-crashed', message: 'The generation worker was replaced (recycled) before it answered.' });
    worker.removeAllListeners('message');
    worker.terminate().catch(() => undefined);
  }

  async dispose(): Promise<void> {
    this.#disposed = true;
    const exited = this.#exited;
    this.recycle();
    await exited;
  }

  #ensureWorker(): Worker {
    if (this.#worker !== null) return this.#worker;
    const worker = launchGenerationWorker(this.options);
    trackGenerationWorker(worker);
    this.#worker = worker;
    this.#exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (raw: unknown) => this.#receive(worker, raw));
    worker.on('error', (error: Error) => this.#lost(worker, { code: 'worker-crashed', message: `The generation worker crashed: ${error.name}: ${error.message}` }));
    worker.on('messageerror', (error: Error) => this.#lost(worker, { code: 'protocol', message: `A message from the generation worker could not be deserialized: ${error.message}` }));
    worker.once('exit', (code: number) => this.#lost(worker, {
      code: 'worker-crashed',
      message: `The generation worker exited with code ${code} before the run finished (process.exit in native code, or the thread was terminated).`,
    }));
    return worker;
  }

  /** The worker died: whatever it was answering fails, and the next use starts a fresh one. */
  #lost(worker: Worker, error: RunErrorPayload): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    this.#runs = 0;
    this.#failAll(error);
    worker.terminate().catch(() => undefined);
  }

  #failAll(error: RunErrorPayload): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    this.#busy = null;
    for (const request of pending) {
      if (request.kind === 'warm') request.reject(new RunError(error));
      else request.run.fail(error);
    }
  }

  #receive(worker: Worker, raw: unknown): void {
    if (this.#worker !== worker) return;
    let message: WorkerMessage;
    try {
      message = parseWorkerMessage(raw);
    } catch (error) {
      this.#lost(worker, { code: 'protocol', message: (error as Error).message });
      return;
    }
    if (message.type === 'ready') {
      if (message.protocolVersion !== PROTOCOL_VERSION) {
        this.#lost(worker, {
          code: 'protocol',
          message: `The generation worker speaks protocol version ${message.protocolVersion}; this host speaks ${PROTOCOL_VERSION}.`,
          fix: 'Rebuild kvscope (npm run build) so the worker and the host come from the same sources.',
        });
      }
      return;
    }
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return; // a late answer to a request that already failed
    if (pending.kind === 'warm') {
      this.#pending.delete(message.id);
      if (message.type === 'warmed') pending.resolve(message.loadMs);
      else if (message.type === 'error') pending.reject(new RunError(message.error));
      return;
    }
    // The worker is free once it has said its last word on the run (a run disposed early keeps it
    // busy until then: the worker is still winding it down).
    if (message.type === 'done' || message.type === 'error') {
      this.#pending.delete(message.id);
      if (this.#busy === pending.run) this.#busy = null;
    }
    pending.run.receive(message);
  }
}

interface WarmRunHooks {
  cancel(): void;
  /** the worker did not stop in time: replace it */
  stuck(): void;
  /** the run was given up on: replace the worker if it has not stopped within `timeoutMs` */
  windDown(timeoutMs: number): void;
}

/** One run on the warm worker: the same promise, events and errors as a per-run worker's (worker-client.ts). */
class WarmRun implements RunHandle {
  readonly done: Promise<GenerationResult>;
  #settled = false;
  #cancelTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #deadline = new CancelDeadline();
  #resolve!: (result: GenerationResult) => void;
  #reject!: (error: RunError) => void;

  constructor(readonly id: RequestId, private readonly handlers: RunHandlers, private readonly cancelTimeoutMs: number | null, private readonly hooks: WarmRunHooks) {
    this.done = new Promise<GenerationResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.done.catch(() => undefined);
  }

  cancel(): void {
    if (this.#settled) return;
    this.hooks.cancel();
    if (this.cancelTimeoutMs === null) return;
    const timeoutMs = this.#deadline.timeoutMs(this.cancelTimeoutMs);
    this.#cancelTimer ??= setTimeout(() => {
      this.fail({ code: 'cancel-timeout', message: this.#deadline.message(timeoutMs) });
      this.hooks.stuck();
    }, timeoutMs);
  }

  /** A run that is disposed before it ends is cancelled; its worker stays for the next run. */
  dispose(): void {
    if (this.#settled) return;
    this.hooks.cancel();
    if (this.cancelTimeoutMs !== null) this.hooks.windDown(this.#deadline.timeoutMs(this.cancelTimeoutMs));
    this.fail({ code: 'cancelled', message: 'The run was disposed before it finished.' });
  }

  receive(message: WorkerMessage): void {
    if (this.#settled) return;
    switch (message.type) {
      case 'text':
        this.#safely(() => this.handlers.onText?.(message.delta, message.tokenIds));
        return;
      case 'metrics':
        this.#deadline.observe(message.steps);
        this.#safely(() => this.handlers.onMetrics?.(message.steps));
        return;
      case 'done':
        this.#settle(() => this.#resolve(message.result));
        return;
      case 'error':
        this.fail(message.error);
        return;
      case 'ready':
      case 'warmed':
        return;
      default: {
        const unknown: never = message;
        throw new Error(`Unhandled worker message ${JSON.stringify(unknown)}`);
      }
    }
  }

  fail(error: RunErrorPayload): void {
    this.#settle(() => this.#reject(new RunError(error)));
  }

  #safely(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.fail({ code: 'internal', message: `A run handler threw: ${(error as Error).message}` });
    }
  }

  #settle(outcome: () => void): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#cancelTimer);
    outcome();
  }
}
