import type { EvalProgress } from '../../app/lab/evaluate.js';
import type { EvalResult } from '../../app/lab/eval-result.js';
import type { EvalSettings } from '../../app/lab/eval-settings.js';
import type { ReferenceSummary } from '../../app/lab/lab-protocol.js';

/**
 * A stand-in for app/node/lab/run-eval.ts, loaded into the real lab worker thread by tests
 * (`new LabWorker({ engineModule })`). The text's name picks the behaviour:
 * - `windows-<ms>`: three windows of <ms> each, reported as progress, stopping at a cancel between them;
 * - `stuck-after-<ms>`: two windows of <ms>, reported, then awaits forever without polling the cancel;
 * - `exit`: process.exit(5) mid-job;
 * - `pid`: a reference whose key names the process the engine runs in (`pid-<process.pid>`).
 */
interface Hooks {
  readonly isCancelled: () => boolean;
  readonly onProgress: (progress: EvalProgress) => void;
}

/** Only the behaviours that end without a result: an evaluation's result would need a real model. */
export async function runEval(settings: EvalSettings, hooks: Hooks): Promise<EvalResult> {
  await job(settings.text.name, hooks);
  throw new Error('the fake lab engine evaluates nothing; use a reference job for a result');
}

export async function ensureReference(settings: EvalSettings, hooks: Hooks): Promise<ReferenceSummary> {
  if (settings.text.name === 'pid') return { key: `pid-${process.pid}`, cached: false, ms: 1, windowsComputed: 0 };
  await job(settings.text.name, hooks);
  return { key: 'fake', cached: false, ms: 1, windowsComputed: 3 };
}

async function job(name: string, hooks: Hooks): Promise<void> {
  if (name === 'exit') {
    await new Promise((resolve) => setTimeout(resolve, 10));
    process.exit(5);
  }
  const stuck = /^stuck-after-(\d+)$/.exec(name);
  if (stuck !== null) {
    await window(Number(stuck[1]), 1, 3, hooks);
    await window(Number(stuck[1]), 2, 3, hooks);
    await new Promise(() => undefined);
  }
  const windowMs = Number(/^windows-(\d+)$/.exec(name)?.[1] ?? 0);
  for (let index = 0; index < 3; index++) {
    if (hooks.isCancelled()) throw Object.assign(new Error('The evaluation was cancelled.'), { name: 'EvalCancelledError' });
    await window(windowMs, index + 1, 3, hooks);
  }
}

async function window(ms: number, windowsDone: number, windows: number, hooks: Hooks): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
  hooks.onProgress({ phase: 'eval', windowsDone, windows });
}
