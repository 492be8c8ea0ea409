import { afterEach, describe, expect, it } from 'vitest';
import type { RunSettings, StepMetrics } from '../../engine/types.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { RunError } from '../../protocol/run-error.js';
import { hasShared } from '../golden.js';
import { README_FIRST_16, storiesDir } from '../test-support/stories.js';
import { ExclusiveGate } from './exclusive-gate.js';
import type { RunHandle } from '../../protocol/run-handle.js';
import { liveGenerationWorkers, startRun, type StartRunOptions } from './worker-client.js';

/** The fake engine runs in the real worker thread; its prompt picks the behaviour (see fake-engine.ts). */
const FAKE: StartRunOptions = { engineModule: new URL('../../../workers/test-support/fake-engine.ts', import.meta.url).href };
const WORKER_EXIT_BUDGET_MS = 5_000;

function settings(prompt: string, maxNewTokens = 8, executionProvider: RunSettings['executionProvider'] = 'cpu'): RunSettings {
  return {
    model: '/models/fake', executionProvider, cacheMode: 'dynamic', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, prompt, maxNewTokens,
    sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false,
  };
}

const handles: RunHandle[] = [];
function track(handle: RunHandle): RunHandle {
  handles.push(handle);
  return handle;
}

async function failure(handle: RunHandle): Promise<RunError> {
  const error: unknown = await handle.done.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(RunError);
  return error as RunError;
}

// Every run's thread must be gone after its test: a leaked worker holds a model (and maybe a GPU).
afterEach(async () => {
  for (const handle of handles.splice(0)) handle.dispose();
  const deadline = Date.now() + WORKER_EXIT_BUDGET_MS;
  while (liveGenerationWorkers() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(liveGenerationWorkers()).toBe(0);
});

describe('startRun with a fake engine in a real worker thread', () => {
  it('streams every text and step before done, batched, and resolves with the result', async () => {
    const text: string[] = [];
    const tokens: number[] = [];
    const steps: StepMetrics[] = [];
    let batches = 0;
    const handle = track(startRun(settings('steps', 500), {
      onText: (delta, ids) => { text.push(delta); tokens.push(...ids); },
      onMetrics: (batch) => { steps.push(...batch); batches++; },
    }, FAKE));
    const result = await handle.done;
    expect(result.stopReason).toBe('max-new-tokens');
    expect(result.generatedTokenIds).toHaveLength(500);
    expect(tokens).toEqual(result.generatedTokenIds);
    expect(text.join('')).toBe(result.text);
    expect(steps.map((s) => s.step)).toEqual([...Array(500).keys()]);
    // SNR Infinity survives the thread hop (structured clone), unlike JSON.
    expect(steps[0]!.flushes[0]!.value.snrDb).toBe(Infinity);
    expect(batches).toBeLessThan(500);
  });

  it('stops within one step of a cancel and resolves with stopReason cancelled', async () => {
    // `steps` yields only through setImmediate between steps, as onnxruntime-node's session.run
    // does: the cancel message must still get through. A million steps would take minutes.
    for (const prompt of ['steps', 'slow']) {
      let seen = 0;
      let stepsAtCancel = -1;
      const handle = track(startRun(settings(prompt, 1_000_000), {
        onMetrics: (batch) => {
          seen += batch.length;
          if (seen >= 3 && stepsAtCancel < 0) {
            stepsAtCancel = seen;
            handle.cancel();
          }
        },
      }, FAKE));
      const result = await handle.done;
      expect(result.stopReason, prompt).toBe('cancelled');
      expect(result.steps).toHaveLength(result.generatedTokenIds.length);
      // Only the steps made while the cancel crossed over: a few 20 ms steps, or some thousands of
      // microsecond steps, never the million.
      expect(result.generatedTokenIds.length - stepsAtCancel, prompt).toBeLessThanOrEqual(prompt === 'slow' ? 5 : 10_000);
    }
  });

  it('turns a thrown error into a typed RunError without a stack trace', async () => {
    const config = await failure(track(startRun(settings('config-error'), {}, FAKE)));
    expect(config.code).toBe('invalid-input');
    expect(config.message).toBe('/models/nowhere/config.json does not exist. Check the path.');

    const refused = await failure(track(startRun(settings('refuse'), {}, FAKE)));
    expect(refused.code).toBe('refused');
    expect(refused.fix).toBe('Use --layer-policy full-attention-only.');
    expect(refused.diagnostics.map((d) => d.code)).toEqual(['unsupported-layer-types']);

    const bug = await failure(track(startRun(settings('type-error'), {}, FAKE)));
    expect(bug.code).toBe('internal');
    expect(bug.message).toBe("TypeError: Cannot read properties of undefined (reading 'dims')");
  });

  it('ends the run with worker-crashed when the thread calls process.exit or throws outside the run', async () => {
    const exited = await failure(track(startRun(settings('exit'), {}, FAKE)));
    expect(exited.code).toBe('worker-crashed');
    expect(exited.message).toMatch(/exited with code 3/);

    const uncaught = await failure(track(startRun(settings('uncaught'), {}, FAKE)));
    expect(uncaught.code).toBe('worker-crashed');
    expect(uncaught.message).toMatch(/boom outside the run/);
  });

  it('ends the run with worker-crashed when the thread runs out of heap', async () => {
    const oom = await failure(track(startRun(settings('oom'), {}, { ...FAKE, resourceLimits: { maxOldGenerationSizeMb: 64 } })));
    expect(oom.code).toBe('worker-crashed');
    expect(oom.message).toMatch(/out of memory/);
  });

  it('terminates a worker that does not honour a cancel in time (stuck in a synchronous loop, or never polling)', async () => {
    for (const prompt of ['hang', 'ignore-cancel']) {
      const handle = track(startRun(settings(prompt), {}, { ...FAKE, cancelTimeoutMs: 300 }));
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      handle.cancel();
      const error = await failure(handle);
      expect(error.code, prompt).toBe('cancel-timeout');
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });

  it('with cancelTimeoutMs null (the CLI) never terminates a cancelled worker: a slow step is waited for, not cut mid-run', async () => {
    const handle = track(startRun(settings('ignore-cancel'), {}, { ...FAKE, cancelTimeoutMs: null }));
    await new Promise((r) => setTimeout(r, 200));
    handle.cancel();
    let settled = false;
    void handle.done.then(() => (settled = true), () => (settled = true));
    // well past the 300 ms that terminated it above
    await new Promise((r) => setTimeout(r, 1_000));
    expect(settled).toBe(false);
    expect(liveGenerationWorkers()).toBe(1);
  });

  it('ends a run that is disposed before it finishes, and terminates its worker', async () => {
    const disposed = track(startRun(settings('slow', 10_000), {}, FAKE));
    await new Promise((r) => setTimeout(r, 100));
    disposed.dispose();
    expect((await failure(disposed)).code).toBe('cancelled');
  });

  it('queues a second WebGPU run until the first worker has exited, and lets a queued run be cancelled', async () => {
    const gate = new ExclusiveGate();
    const order: string[] = [];
    const first = track(startRun(settings('slow', 5, 'webgpu'), {}, { ...FAKE, webgpuGate: gate }));
    let queued = false;
    const second = track(startRun(settings('steps', 3, 'webgpu'), { onQueued: () => { queued = true; } }, { ...FAKE, webgpuGate: gate }));
    const third = track(startRun(settings('steps', 3, 'webgpu'), {}, { ...FAKE, webgpuGate: gate }));
    third.cancel();
    void first.done.then(() => order.push('first'));
    void second.done.then(() => order.push('second'));
    expect(queued).toBe(true);
    expect((await failure(third)).code).toBe('cancelled');
    await Promise.all([first.done, second.done]);
    expect(order).toEqual(['first', 'second']);
    await new Promise((r) => setTimeout(r, 50));
    expect(gate.pending).toBe(0);
  });

  it('runs CPU workers side by side without waiting for the gate', async () => {
    const gate = new ExclusiveGate();
    const a = track(startRun(settings('steps', 3), {}, { ...FAKE, webgpuGate: gate }));
    const b = track(startRun(settings('steps', 3), {}, { ...FAKE, webgpuGate: gate }));
    expect(gate.pending).toBe(0);
    await Promise.all([a.done, b.done]);
  });
});

describe.skipIf(!hasShared())('startRun with the real engine on stories260k', () => {
  const stories = (maxNewTokens: number): RunSettings => ({ ...settings('', maxNewTokens), model: storiesDir() });

  it("reproduces the README's greedy ids through the worker thread", async () => {
    const streamed: number[] = [];
    const handle = track(startRun(stories(16), { onText: (_delta, ids) => void streamed.push(...ids) }));
    const result = await handle.done;
    expect(result.promptTokenIds).toEqual([1]);
    expect(result.generatedTokenIds).toEqual(README_FIRST_16);
    expect(result.text.startsWith('Once upon a time')).toBe(true);
    expect(result.model.onnxSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('cancels a real run between two session.run calls', async () => {
    let cancelledAfter = -1;
    const handle = track(startRun(stories(340), {
      onMetrics: (steps) => {
        if (cancelledAfter >= 0) return;
        cancelledAfter = steps.at(-1)!.step;
        handle.cancel();
      },
    }));
    const result = await handle.done;
    expect(result.stopReason).toBe('cancelled');
    expect(cancelledAfter).toBeGreaterThanOrEqual(0);
    expect(result.generatedTokenIds.length).toBeLessThan(340);
  });
});
