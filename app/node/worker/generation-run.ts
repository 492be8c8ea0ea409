import type { GenerationResult } from '../../engine/generation-result.js';
import { PROTOCOL_VERSION, type HostMessage, type RequestId, type RunErrorPayload, type WorkerMessage } from '../../protocol/messages.js';
import { parseWorkerMessage } from '../../protocol/parse-message.js';
import { RunError } from '../../protocol/run-error.js';
import type { RunHandle, RunHandlers } from '../../protocol/run-handle.js';
import type { SupervisedProtocol, SupervisedRequest } from './worker-supervisor.js';

/** The generation worker's protocol (app/protocol/messages.ts) as the supervisor drives it. */
export const GENERATION_WORKER: SupervisedProtocol<HostMessage, WorkerMessage> = {
  entry: 'generation-worker',
  name: 'generation worker',
  work: 'the run',
  version: PROTOCOL_VERSION,
  parse: parseWorkerMessage,
  requestOf: (message) => (message.type === 'ready' ? undefined : message.id),
  isLast: (message) => message.type === 'done' || message.type === 'error' || message.type === 'warmed',
  cancelMessage: (id) => ({ type: 'cancel', id }),
  observe: (message, deadline) => {
    if (message.type === 'metrics') deadline.observe(message.steps);
  },
  delivered: 'Metrics and text up to its last report were delivered.',
  outOfMemoryFix: 'Use a smaller model or fewer new tokens, or a quantized cache.',
};

/** How a run reaches its worker: a run's own (worker-client.ts) or the warm one (warm-worker.ts). */
export interface RunControls {
  /** ask the worker to stop the run at its next step */
  cancel(): void;
  /** the caller gave up on the run (it has failed already with `cancelled`) */
  dispose(): void;
}

/**
 * One generation run as its caller sees it (RunHandle), whichever worker carries it: the worker's
 * text and metrics go to the handlers, `done` resolves, `error` or the supervisor's failure rejects
 * with a RunError. The first outcome wins; `settled` then lets the worker go.
 */
export class GenerationRun implements RunHandle, SupervisedRequest<WorkerMessage> {
  readonly done: Promise<GenerationResult>;
  #settled = false;
  #resolve!: (result: GenerationResult) => void;
  #reject!: (error: RunError) => void;

  constructor(
    readonly id: RequestId,
    private readonly handlers: RunHandlers,
    private readonly controls: RunControls,
    private readonly settled: () => void = () => undefined,
  ) {
    this.done = new Promise<GenerationResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A caller that disposes without awaiting `done` must not get an unhandled rejection.
    this.done.catch(() => undefined);
  }

  get isSettled(): boolean {
    return this.#settled;
  }

  cancel(): void {
    if (!this.#settled) this.controls.cancel();
  }

  dispose(): void {
    if (this.#settled) return;
    this.fail({ code: 'cancelled', message: 'The run was disposed before it finished.' });
    this.controls.dispose();
  }

  receive(message: WorkerMessage): void {
    if (this.#settled) return;
    switch (message.type) {
      case 'text':
        this.#safely(() => this.handlers.onText?.(message.delta, message.tokenIds));
        return;
      case 'metrics':
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
        return; // a run is never answered with these
      default: {
        const unknown: never = message;
        throw new Error(`Unhandled worker message ${JSON.stringify(unknown)}`);
      }
    }
  }

  fail(error: RunErrorPayload): void {
    this.#settle(() => this.#reject(new RunError(error)));
  }

  /** A handler that throws is a bug in the caller; it ends the run instead of escaping into the event loop. */
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
    outcome();
    this.settled();
  }
}
