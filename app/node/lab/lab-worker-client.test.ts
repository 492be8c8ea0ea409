import { afterEach, describe, expect, it } from 'vitest';
import type { EvalProgress } from '../../lab/evaluate.js';
import type { EvalSettings } from '../../lab/eval-settings.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { defaultWindowSettings } from '../../lab/eval-settings.js';
import { RunError } from '../../protocol/run-error.js';
import { launchProcess } from '../worker/process-launch.js';
import { LabWorker, liveLabWorkers, type LabWorkerOptions } from './lab-worker-client.js';

/** The fake lab engine runs in the real worker; the text's name picks its behaviour (fake-lab-engine.ts). */
const ENGINE: LabWorkerOptions = { engineModule: new URL('../../../workers/test-support/fake-lab-engine.ts', import.meta.url).href };

function settings(name: string): EvalSettings {
  return {
    model: '/models/fake', executionProvider: 'cpu', cacheMode: 'dynamic', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
    text: { name, content: 'fake' }, windows: { ...defaultWindowSettings(), maxWindows: 3 },
  };
}

const workers: LabWorker[] = [];
function labWorker(options: LabWorkerOptions): LabWorker {
  const worker = new LabWorker(options);
  workers.push(worker);
  return worker;
}

async function rejection(promise: Promise<unknown>): Promise<RunError> {
  const error: unknown = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(RunError);
  return error as RunError;
}

// Every lab worker's thread must be gone after its test.
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.dispose();
  for (let waited = 0; liveLabWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  expect(liveLabWorkers()).toBe(0);
});

// The one supervisor drives both kinds of worker alike: every behaviour below holds for a thread and for a process.
describe.each([
  { kind: 'thread', FAKE: ENGINE },
  { kind: 'process', FAKE: { ...ENGINE, launcher: launchProcess } },
])('LabWorker on the one worker supervisor (a fake lab engine in a real $kind)', ({ FAKE }) => {
  it('runs jobs one after another on one thread, with their progress', async () => {
    const worker = labWorker(FAKE);
    const progress: EvalProgress[] = [];
    for (let i = 0; i < 2; i++) {
      const job = worker.reference(settings('windows-5'), { onProgress: (p) => progress.push(p) });
      expect(worker.busy).toBe(true);
      expect(await job.done).toEqual({ key: 'fake', cached: false, ms: 1, windowsComputed: 3 });
      expect(worker.busy).toBe(false);
    }
    expect(progress.map((p) => p.windowsDone)).toEqual([1, 2, 3, 1, 2, 3]);
    expect(liveLabWorkers()).toBe(1);
  });

  it('stops a cancelled job at its next window with the engine\'s cancelled error', async () => {
    const worker = labWorker({ ...FAKE, cancelTimeoutMs: 300 });
    const job = worker.reference(settings('windows-50'), { onProgress: () => job.cancel() });
    expect(await rejection(job.done)).toMatchObject({ code: 'cancelled', message: 'The evaluation was cancelled.' });
  });

  it('terminates a worker silent past the shared deadline, says it was taken to be stuck, and fails later jobs', async () => {
    const worker = labWorker({ ...FAKE, cancelTimeoutMs: 300 });
    let cancelledAt = 0;
    const job = worker.evaluate(settings('stuck-after-0'), {
      onProgress: (p) => {
        if (p.windowsDone !== 2) return;
        cancelledAt = Date.now();
        job.cancel();
      },
    });
    const error = await rejection(job.done);
    expect(error.code).toBe('cancel-timeout');
    // the 300 ms floor (its two windows took next to nothing; a loaded machine may stretch them a little)
    expect(error.message).toMatch(/^The lab worker did not stop within 0\.\d+ s of the cancel .*taken to be stuck/);
    expect(Date.now() - cancelledAt).toBeLessThan(2_000);
    expect((await rejection(worker.reference(settings('windows-0')).done)).code).toBe('cancel-timeout');
  });

  it('waits four of its slowest windows, not the floor, when the windows are slower than the floor', async () => {
    const worker = labWorker({ ...FAKE, cancelTimeoutMs: 100 });
    // two 250 ms windows (the first, with the engine's load, is no step), then silence: the deadline
    // is 4 × ~250 ms, not the 100 ms floor
    const job = worker.evaluate(settings('stuck-after-250'), { onProgress: (p) => { if (p.windowsDone === 2) job.cancel(); } });
    const error = await rejection(job.done);
    expect(error.code).toBe('cancel-timeout');
    const seconds = Number(/within ([\d.]+) s/.exec(error.message)?.[1]);
    // the host times a window between two message arrivals, which can come a fraction of a
    // millisecond short of the worker's 250 ms timer (0.999 s seen once); the floor is 0.1 s
    expect(seconds).toBeGreaterThanOrEqual(0.99);
    // four windows of 250 ms and the timer's jitter on a loaded machine, not a fixed 10 s
    expect(seconds).toBeLessThan(4);
  });

  it('fails the job of a worker that exits, with the exit code', async () => {
    const worker = labWorker(FAKE);
    const error = await rejection(worker.evaluate(settings('exit')).done);
    expect(error.code).toBe('worker-crashed');
    expect(error.message).toMatch(/^The lab worker( \(process \d+\))? exited with code 5 before its job finished/);
  });
});
