import type { EvalResult } from '../../../lab/eval-result.js';
import type { EvalSettings } from '../../../lab/eval-settings.js';
import type { ReferenceSummary } from '../../../lab/lab-protocol.js';
import { createOrtDecoderSession } from '../ort-decoder-session.js';
import { prefillStep } from './prefill-step.js';

/**
 * A stand-in lab engine for shared-weights.test.ts, loaded into a real lab worker process: the
 * settings' `model` is a graph with external data; the lab worker has already set the job's
 * sweepJobs (workers/lab-worker.ts), so its session is opened as a sweep job's. The text's name:
 * - `warm`: a session opened, run once and disposed (onnxruntime loaded before anything is measured);
 * - `hold`: a session opened and run once, reported as a window done, and kept open until the job
 *   is cancelled, so the host can read this process's memory meanwhile.
 */
interface Hooks {
  readonly isCancelled: () => boolean;
  readonly onProgress: (progress: { phase: 'eval'; windowsDone: number; windows: number }) => void;
}

export async function runEval(): Promise<EvalResult> {
  throw new Error('the weights engine evaluates nothing; it runs reference jobs');
}

export async function ensureReference(settings: EvalSettings, hooks: Hooks): Promise<ReferenceSummary> {
  const session = await createOrtDecoderSession(settings.model, { executionProvider: 'cpu', intraOpNumThreads: 1 });
  try {
    await prefillStep(session);
    if (settings.text.name === 'hold') {
      hooks.onProgress({ phase: 'eval', windowsDone: 1, windows: 1 });
      while (!hooks.isCancelled()) await new Promise((resolve) => setTimeout(resolve, 20));
      throw Object.assign(new Error('The evaluation was cancelled.'), { name: 'EvalCancelledError' });
    }
  } finally {
    await session.dispose();
  }
  return { key: 'warm', cached: false, ms: 1, windowsComputed: 0 };
}
