import type { EvalProgress } from '../app/lab/evaluate.js';
import type { EvalResult } from '../app/lab/eval-result.js';
import type { EvalSettings } from '../app/lab/eval-settings.js';
import { LAB_PROTOCOL_VERSION, type LabJobOptions, type LabWorkerMessage, type ReferenceSummary } from '../app/lab/lab-protocol.js';
import { parseLabHostMessage } from '../app/lab/parse-lab-message.js';
import { toRunErrorPayload } from '../app/protocol/run-error.js';
import type { RunErrorPayload } from '../app/protocol/messages.js';

/** The lab engine (app/node/lab/run-eval.ts), or a test's stand-in with the same shape. */
export interface LabEngine {
  runEval(settings: EvalSettings, options: LabJobOptions & { isCancelled: () => boolean; onProgress: (progress: EvalProgress) => void }): Promise<EvalResult>;
  ensureReference(settings: EvalSettings, options: LabJobOptions & { isCancelled: () => boolean; onProgress: (progress: EvalProgress) => void }): Promise<ReferenceSummary>;
}

/**
 * The lab worker's logic apart from the thread: one job at a time (an evaluation or a reference),
 * each ending in exactly one `evaluated`, `referenced` or `error`; the engine module stays loaded and
 * its session warm between jobs. A cancelled job ends with an error of code `cancelled`.
 */
export class LabLoop {
  private active: { readonly id: number; cancelled: boolean } | undefined;

  constructor(private readonly post: (message: LabWorkerMessage) => void, private readonly loadEngine: () => Promise<LabEngine>) {}

  announce(): void {
    this.post({ type: 'ready', protocolVersion: LAB_PROTOCOL_VERSION });
  }

  receive(raw: unknown): void {
    let message;
    try {
      message = parseLabHostMessage(raw);
    } catch (error) {
      this.post({ type: 'error', id: 0, error: { ...toRunErrorPayload(error), code: 'protocol' } });
      return;
    }
    switch (message.type) {
      case 'evaluate':
      case 'reference':
        if (this.active !== undefined) {
          this.post({ type: 'error', id: message.id, error: { code: 'worker-busy', message: `This lab worker is running job ${this.active.id}; it runs one job at a time.` } });
          return;
        }
        void this.run(message.id, message.type, message.settings, message.options);
        return;
      case 'cancel':
        if (this.active?.id === message.id) this.active.cancelled = true;
        return;
      default: {
        const unknown: never = message;
        throw new Error(`Unhandled lab host message ${JSON.stringify(unknown)}`);
      }
    }
  }

  private async run(id: number, kind: 'evaluate' | 'reference', settings: EvalSettings, options: LabJobOptions): Promise<void> {
    const active = { id, cancelled: false };
    this.active = active;
    const hooks = { ...options, isCancelled: () => active.cancelled, onProgress: (progress: EvalProgress) => this.post({ type: 'progress', id, progress }) };
    try {
      const engine = await this.loadEngine();
      if (kind === 'evaluate') this.post({ type: 'evaluated', id, result: await engine.runEval(settings, hooks) });
      else this.post({ type: 'referenced', id, reference: await engine.ensureReference(settings, hooks) });
    } catch (error) {
      this.post({ type: 'error', id, error: labErrorPayload(error) });
    } finally {
      this.active = undefined;
    }
  }
}

function labErrorPayload(error: unknown): RunErrorPayload {
  if (error instanceof Error && error.name === 'EvalCancelledError') return { code: 'cancelled', message: error.message };
  return toRunErrorPayload(error);
}
