import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import type { RunSettings } from '../../engine/types.js';
import { RunError } from '../../protocol/run-error.js';
import { releaseCachedSessions } from '../ort/session-cache.js';
import { storiesSettings } from '../test-support/stories.js';
import { WarmGenerationWorker } from './warm-worker.js';
import { liveGenerationWorkers } from './worker-client.js';

const FAKE = { engineModule: new URL('../../../workers/test-support/fake-engine.ts', import.meta.url).href };

function settings(prompt: string, maxNewTokens = 8): RunSettings {
  return {
    model: '/models/fake', executionProvider: 'cpu', cacheMode: 'dynamic', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, prompt, maxNewTokens,
    sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false,
  };
}

const workers: WarmGenerationWorker[] = [];
function warmWorker(options: ConstructorParameters<typeof WarmGenerationWorker>[0] = FAKE): WarmGenerationWorker {
  const worker = new WarmGenerationWorker(options);
  workers.push(worker);
  return worker;
}

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.dispose();
  expect(liveGenerationWorkers()).toBe(0);
});

async function rejection(promise: Promise<unknown>): Promise<RunError> {
  const error: unknown = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(RunError);
  return error as RunError;
}

describe('WarmGenerationWorker (one worker thread, run after run)', () => {
  it('warms a model and keeps the same thread for the next runs', async () => {
    const worker = warmWorker();
    expect(await worker.warm({ model: 'm', executionProvider: 'cpu' })).toBe(1);
    for (let i = 0; i < 3; i++) {
      const run = worker.tryStart(settings('steps', 20))!;
      expect(worker.busy).toBe(true);
      // one at a time: a second run while this one goes gets no handle (the caller starts its own worker)
      expect(worker.tryStart(settings('steps'))).toBeNull();
      const result = await run.done;
      expect(result.generatedTokenIds).toHaveLength(20);
      expect(worker.busy).toBe(false);
    }
    // the same thread: it remembers the earlier warm-up
    expect(await worker.warm({ model: 'm', executionProvider: 'cpu' })).toBe(2);
    expect(liveGenerationWorkers()).toBe(1);
  });

  it('reports a warm-up that fails with the engine\'s message, and keeps working', async () => {
    const worker = warmWorker();
    const error = await rejection(worker.warm({ model: 'warm-fails', executionProvider: 'cpu' }));
    expect(error).toMatchObject({ code: 'invalid-input', message: '/models/warm-fails/config.json does not exist. Check the path.' });
    expect((await worker.tryStart(settings('steps'))!.done).stopReason).toBe('max-new-tokens');
  });

  it('fails a run whose worker crashes with a clear error, then starts a fresh worker for the next', async () => {
    const worker = warmWorker();
    await worker.warm({ model: 'm', executionProvider: 'cpu' });
    const crashed = await rejection(worker.tryStart(settings('exit'))!.done);
    expect(crashed).toMatchObject({ code: 'worker-crashed', message: expect.stringMatching(/exited with code 3/) });
    expect((await worker.tryStart(settings('steps'))!.done).stopReason).toBe('max-new-tokens');
    // a fresh thread: its first warm-up again
    expect(await worker.warm({ model: 'm', executionProvider: 'cpu' })).toBe(1);
  });

  it('cancels a run and stays warm; replaces a worker that ignores the cancel', async () => {
    const worker = warmWorker({ ...FAKE, cancelTimeoutMs: 300 });
    await worker.warm({ model: 'm', executionProvider: 'cpu' });
    const run = worker.tryStart(settings('slow', 100_000))!;
    await new Promise((r) => setTimeout(r, 60));
    run.cancel();
    expect((await run.done).stopReason).toBe('cancelled');
    expect(await worker.warm({ model: 'm', executionProvider: 'cpu' })).toBe(2);
    const stuck = worker.tryStart(settings('ignore-cancel'))!;
    stuck.cancel();
    expect((await rejection(stuck.done)).code).toBe('cancel-timeout');
    expect(await worker.warm({ model: 'm', executionProvider: 'cpu' })).toBe(1);
  });

  it('recycles itself after a number of runs, and never takes WebGPU runs', async () => {
    const worker = warmWorker({ ...FAKE, recycleAfterRuns: 2 });
    await worker.warm({ model: 'm', executionProvider: 'cpu' });
    for (let i = 0; i < 3; i++) await worker.tryStart(settings('steps'))!.done;
    expect(await worker.warm({ model: 'm', executionProvider: 'cpu' })).toBe(1);
    expect(worker.tryStart({ ...settings('steps'), executionProvider: 'webgpu' })).toBeNull();
  });
});

describe('WarmGenerationWorker on stories260k', () => {
  afterEach(() => releaseCachedSessions());

  it('warms the real model, then runs it with the same ids as a cold run', async () => {
    const worker = warmWorker({});
    const run = storiesSettings({ prompt: 'Once upon a time', maxNewTokens: 16 });
    expect(await worker.warm({ model: run.model, executionProvider: 'cpu' })).toBeGreaterThan(0);
    const first = await worker.tryStart(run)!.done;
    await worker.warm({ model: run.model, executionProvider: 'cpu' });
    const second = await worker.tryStart(run)!.done;
    expect(second.generatedTokenIds).toEqual(first.generatedTokenIds);
    expect(liveGenerationWorkers()).toBe(1);
  });
});
