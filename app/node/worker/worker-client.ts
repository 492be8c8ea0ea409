import type { Worker } from 'node:worker_threads';
import type { GenerationResult } from '../../engine/generation-result.js';
import type { RunSettings } from '../../engine/types.js';
import { PROTOCOL_VERSION, type HostMessage, type RequestId, type RunErrorPayload, type WorkerMessage } from '../../protocol/messages.js';
import { parseWorkerMessage } from '../../protocol/parse-message.js';
import { RunError } from '../../protocol/run-error.js';
import type { RunHandle, RunHandlers } from '../../protocol/run-handle.js';
import { CancelDeadline } from './cancel-deadline.js';
import { webgpuGate, type ExclusiveGate } from './exclusive-gate.js';
import { launchGenerationWorker, type WorkerLaunchOptions } from './worker-launch.js';

export interface StartRunOptions extends WorkerLaunchOptions {
  /**
   * how long a cancelled run may take to stop before its worker is terminated (default 10 s); null:
   * never (the CLI: terminating a worker whose session.run is in flight aborts the process natively,
   * and a slow step, a long prefill on a big model, is no hang; SIGKILL remains the hard stop)
   */
  readonly cancelTimeoutMs?: number | null;
  /** the gate WebGPU runs pass through (default: the process's one gate) */
  readonly webgpuGate?: ExclusiveGate;
}

/**
 * A step of a big model on the CPU can take seconds; a cancel is honoured at the next step, so the
 * timeout allows for a few slow steps before assuming the worker is stuck in native code. It is the
 * floor: a run whose steps are slower gets four of its slowest steps (cancel-deadline.ts).
 */
export const DEFAULT_CANCEL_TIMEOUT_MS = 10_000;

let nextRequestId = 1;

/** Threads started and not yet exited, so tests can check that every run's worker went away. */
const liveWorkers = new Set<Worker>();

export function liveGenerationWorkers(): number {
  return liveWorkers.size;
}

/** Counts a worker started elsewhere (the warm worker) among the live ones until it exits. */
export function trackGenerationWorker(worker: Worker): void {
  liveWorkers.add(worker);
  worker.once('exit', () => liveWorkers.delete(worker));
}

/**
 * Runs one generation in its own worker thread and streams what it reports. One worker per run:
 * the model session, its native memory and any WebGPU device go away with the thread.
 */
export function startRun(settings: RunSettings, handlers: RunHandlers = {}, options: StartRunOptions = {}): RunHandle {
  return new WorkerRun(nextRequestId++, settings, handlers, options);
}

type RunState = 'queued' | 'running' | 'settled';

class WorkerRun implements RunHandle {
  readonly done: Promise<GenerationResult>;
  private state: RunState = 'queued';
  private worker: Worker | undefined;
  private cancelTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly deadline = new CancelDeadline();
  private resolve!: (result: GenerationResult) => void;
  private reject!: (error: RunError) => void;

  constructor(
    readonly id: RequestId,
    private readonly settings: RunSettings,
    private readonly handlers: RunHandlers,
    private readonly options: StartRunOptions,
  ) {
    this.done = new Promise<GenerationResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // A caller that disposes without awaiting `done` must not get an unhandled rejection.
    this.done.catch(() => undefined);
    if (settings.executionProvider === 'webgpu') this.startAfterGate(options.webgpuGate ?? webgpuGate);
    else this.spawn(() => undefined);
  }

  cancel(): void {
    if (this.state === 'settled') return;
    if (this.state === 'queued') {
      this.fail({ code: 'cancelled', message: 'The run was cancelled while it waited for another WebGPU run to finish; it never started.' });
      return;
    }
    this.send({ type: 'cancel', id: this.id });
    if (this.options.cancelTimeoutMs === null) return;
    const timeoutMs = this.deadline.timeoutMs(this.options.cancelTimeoutMs ?? DEFAULT_CANCEL_TIMEOUT_MS);
    this.cancelTimer ??= setTimeout(() => this.fail({ code: 'cancel-timeout', message: this.deadline.message(timeoutMs) }), timeoutMs);
  }

  dispose(): void {
    if (this.state !== 'settled') this.fail({ code: 'cancelled', message: 'The run was disposed before it finished.' });
  }

  private startAfterGate(gate: ExclusiveGate): void {
    if (gate.pending > 0) this.safely(() => this.handlers.onQueued?.());
    void gate.acquire().then((release) => {
      // Cancelled or disposed while queued: pass the gate on without starting a worker.
      if (this.state === 'settled') release();
      else this.spawn(release);
    });
  }

  private spawn(release: () => void): void {
    this.state = 'running';
    let worker: Worker;
    try {
      worker = launchGenerationWorker(this.options);
    } catch (error) {
      release();
      this.fail({ code: 'internal', message: `Cannot start the generation worker: ${(error as Error).message}` });
      return;
    }
    this.worker = worker;
    liveWorkers.add(worker);
    worker.on('message', (raw: unknown) => this.receive(raw));
    worker.on('error', (error: Error) => this.fail(crashPayload(error)));
    worker.on('messageerror', (error: Error) => this.fail({ code: 'protocol', message: `A message from the generation worker could not be deserialized: ${error.message}` }));
    // The gate opens only when the thread is gone: its WebGPU device dies with it.
    worker.once('exit', (exitCode: number) => {
      liveWorkers.delete(worker);
      release();
      this.fail({
        code: 'worker-crashed',
        message: `The generation worker exited with code ${exitCode} before the run finished (process.exit in native code, or the thread was terminated).`,
      });
    });
    this.send({ type: 'start', id: this.id, settings: this.settings });
  }

  private receive(raw: unknown): void {
    if (this.state !== 'running') return;
    let message: WorkerMessage;
    try {
      message = parseWorkerMessage(raw);
    } catch (error) {
      this.fail({ code: 'protocol', message: (error as Error).message });
      return;
    }
    if (message.type !== 'ready' && message.id !== this.id && message.id !== 0) {
      this.fail({ code: 'protocol', message: `The generation worker answered request ${message.id}; this run is request ${this.id}.` });
      return;
    }
    switch (message.type) {
      case 'ready':
        if (message.protocolVersion !== PROTOCOL_VERSION) {
          this.fail({
            code: 'protocol',
            message: `The generation worker speaks protocol version ${message.protocolVersion}; this host speaks ${PROTOCOL_VERSION}.`,
            fix: 'Rebuild kvscope (npm run build) so the worker and the host come from the same sources.',
          });
        }
        return;
      case 'text':
        this.safely(() => this.handlers.onText?.(message.delta, message.tokenIds));
        return;
      case 'metrics':
        this.deadline.observe(message.steps);
        this.safely(() => this.handlers.onMetrics?.(message.steps));
        return;
      case 'done':
        this.settle(() => this.resolve(message.result));
        return;
      case 'warmed':
        return; // a per-run worker is never asked to warm
      case 'error':
        this.fail(message.error);
        return;
      default: {
        const unknown: never = message;
        throw new Error(`Unhandled worker message ${JSON.stringify(unknown)}`);
      }
    }
  }

  private send(message: HostMessage): void {
    this.worker?.postMessage(message);
  }

  /** A handler that throws is a bug in the caller; it ends the run instead of escaping into the event loop. */
  private safely(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.fail({ code: 'internal', message: `A run handler threw: ${(error as Error).message}` });
    }
  }

  private fail(payload: RunErrorPayload): void {
    this.settle(() => this.reject(new RunError(payload)));
  }

  /** The first outcome wins; afterwards the worker goes (its exit then only opens the gate). */
  private settle(outcome: () => void): void {
    if (this.state === 'settled') return;
    this.state = 'settled';
    clearTimeout(this.cancelTimer);
    outcome();
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) {
      worker.removeAllListeners('message');
      // Its exit event (above) follows; a terminate that fails leaves nothing more to do.
      worker.terminate().catch(() => undefined);
    }
  }
}

function crashPayload(error: Error): RunErrorPayload {
  const code = (error as { code?: unknown }).code;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return {
      code: 'worker-crashed',
      message: `The generation worker ran out of memory: ${error.message}`,
      fix: 'Use a smaller model or fewer new tokens, or a quantized cache.',
    };
  }
  return { code: 'worker-crashed', message: `The generation worker crashed: ${error.name}: ${error.message}` };
}
