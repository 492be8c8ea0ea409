import type { GenerationObserver } from '../app/engine/generation-observer.js';
import type { GenerationResult } from '../app/engine/generation-result.js';
import type { RunSettings } from '../app/engine/types.js';
import { NO_REQUEST, PROTOCOL_VERSION, type RequestId, type WarmTarget, type WorkerMessage } from '../app/protocol/messages.js';
import { parseHostMessage } from '../app/protocol/parse-message.js';
import { toRunErrorPayload } from '../app/protocol/run-error.js';
import { StreamBatcher, type BatchClock, type StreamBatcherOptions } from '../app/protocol/stream-batcher.js';

/** The engine's entry point (app/node/run-generation.ts), or a test's stand-in with the same shape. */
export type RunGeneration = (settings: RunSettings, observer: GenerationObserver) => Promise<GenerationResult>;

/** The engine's `warmModel` (app/node/run-generation.ts): loads a model for the next run; resolves with the ms it took. */
export type WarmModel = (target: WarmTarget) => Promise<number>;

/** What the worker loads: the run, and (optionally, a test's engine may lack it) the warm-up. */
export interface Engine {
  readonly runGeneration: RunGeneration;
  readonly warmModel?: WarmModel;
}

/**
 * The generation worker's logic, apart from the thread: one `switch` over host messages, one run at a
 * time, and every run ending in exactly one `done` or `error` after its last text and metrics batch.
 * A worker takes run after run (the host keeps one warm, app/node/worker/warm-worker.ts): `warm` loads
 * a model ahead of its run, and a `start` that arrives while a warm-up is under way waits for it.
 * Kept free of worker_threads so its rules are testable without a thread.
 */
export class GenerationLoop {
  private active: { readonly id: RequestId; cancelled: boolean } | undefined;
  private warming: Promise<void> = Promise.resolve();

  constructor(
    private readonly post: (message: WorkerMessage) => void,
    private readonly loadEngine: () => Promise<RunGeneration | Engine>,
    private readonly clock: BatchClock,
    private readonly batchOptions?: StreamBatcherOptions,
  ) {}

  /** Says hello; the host checks the protocol version before trusting anything else. */
  announce(): void {
    this.post({ type: 'ready', protocolVersion: PROTOCOL_VERSION });
  }

  /** Handles one raw message from the host. Never throws: a failure goes back as an `error` message. */
  receive(raw: unknown): void {
    let message;
    try {
      message = parseHostMessage(raw);
    } catch (error) {
      this.post({ type: 'error', id: requestIdOf(raw), error: { ...toRunErrorPayload(error), code: 'protocol' } });
      return;
    }
    switch (message.type) {
      case 'start':
        if (this.active !== undefined) {
          this.post({
            type: 'error', id: message.id,
            error: { code: 'worker-busy', message: `This worker is already running request ${this.active.id}; it runs one generation at a time.`, fix: 'Cancel the running generation or start another worker.' },
          });
          return;
        }
        void this.run(message.id, message.settings);
        return;
      case 'warm':
        if (this.active !== undefined) {
          this.post({ type: 'error', id: message.id, error: { code: 'worker-busy', message: `This worker is running request ${this.active.id}; it warms a model only between runs.` } });
          return;
        }
        this.warming = this.warm(message.id, message.target);
        return;
      case 'cancel':
        // A cancel for a run that already ended crossed its `done` on the way: nothing to stop.
        if (this.active?.id === message.id) this.active.cancelled = true;
        return;
      default: {
        const unknown: never = message;
        throw new Error(`Unhandled host message ${JSON.stringify(unknown)}`);
      }
    }
  }

  private async warm(id: RequestId, target: WarmTarget): Promise<void> {
    await this.warming;
    try {
      const engine = await this.engine();
      const loadMs = engine.warmModel === undefined ? 0 : await engine.warmModel(target);
      this.post({ type: 'warmed', id, loadMs });
    } catch (error) {
      this.post({ type: 'error', id, error: toRunErrorPayload(error) });
    }
  }

  private async engine(): Promise<Engine> {
    const loaded = await this.loadEngine();
    return typeof loaded === 'function' ? { runGeneration: loaded } : loaded;
  }

  private async run(id: RequestId, settings: RunSettings): Promise<void> {
    const active = { id, cancelled: false };
    this.active = active;
    const batcher = new StreamBatcher(id, this.post, this.clock, this.batchOptions);
    try {
      // a warm-up under way loads what this run needs: wait for it rather than load twice
      await this.warming;
      const { runGeneration } = await this.engine();
      const result = await runGeneration(settings, {
        onText: (delta, tokenId) => batcher.addText(delta, tokenId),
        onStep: (metrics) => batcher.addStep(metrics),
        // The engine polls this between steps; the flag flips when `cancel` arrives, which it can
        // because session.run is asynchronous and leaves this thread's event loop turning.
        isCancelled: () => active.cancelled,
      });
      batcher.flush();
      this.post({ type: 'done', id, result });
    } catch (error) {
      batcher.flush();
      this.post({ type: 'error', id, error: toRunErrorPayload(error) });
    } finally {
      batcher.dispose();
      this.active = undefined;
    }
  }
}

/** The id of a message that failed to parse, when it has a usable one, so the host can match the error. */
function requestIdOf(raw: unknown): RequestId {
  const id = typeof raw === 'object' && raw !== null ? (raw as { id?: unknown }).id : undefined;
  return Number.isSafeInteger(id) && (id as number) >= 1 ? (id as number) : NO_REQUEST;
}
