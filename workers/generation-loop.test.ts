import { describe, expect, it } from 'vitest';
import type { WorkerMessage } from '../app/protocol/messages.js';
import { SAMPLE_SETTINGS } from '../app/protocol/test-support/sample-messages.js';
import { GenerationLoop, type RunGeneration } from './generation-loop.js';
import { runGeneration as fakeEngine } from './test-support/fake-engine.js';

const IMMEDIATE_CLOCK = { now: () => performance.now(), schedule: (callback: () => void, delayMs: number) => { const t = setTimeout(callback, delayMs); return () => clearTimeout(t); } };

function loopWith(engine: RunGeneration | Promise<RunGeneration>): { loop: GenerationLoop; posted: WorkerMessage[]; settled: (id?: number) => Promise<void> } {
  const posted: WorkerMessage[] = [];
  const loop = new GenerationLoop((m) => void posted.push(m), () => Promise.resolve(engine), IMMEDIATE_CLOCK);
  const settled = async (id = 1): Promise<void> => {
    while (!posted.some((m) => (m.type === 'done' || m.type === 'error') && m.id === id)) await new Promise((r) => setTimeout(r, 1));
  };
  return { loop, posted, settled };
}

describe('GenerationLoop (the worker without its thread)', () => {
  it('sends every text and metrics batch before done', async () => {
    const { loop, posted, settled } = loopWith(fakeEngine);
    loop.announce();
    loop.receive({ type: 'start', id: 4, settings: { ...SAMPLE_SETTINGS, prompt: 'steps', maxNewTokens: 50 } });
    await settled(4);
    expect(posted[0]).toEqual({ type: 'ready', protocolVersion: 1 });
    const last = posted.at(-1)!;
    expect(last.type).toBe('done');
    const steps = posted.flatMap((m) => (m.type === 'metrics' ? m.steps.map((s) => s.step) : []));
    const tokens = posted.flatMap((m) => (m.type === 'text' ? m.tokenIds : []));
    expect(steps).toEqual([...Array(50).keys()]);
    expect(tokens).toHaveLength(50);
    expect(posted.every((m) => m.type === 'ready' || m.id === 4)).toBe(true);
  });

  it('refuses a second start while running, ignores a cancel for another request, and honours its own', async () => {
    const { loop, posted, settled } = loopWith(fakeEngine);
    loop.receive({ type: 'start', id: 1, settings: { ...SAMPLE_SETTINGS, prompt: 'slow', maxNewTokens: 10_000 } });
    loop.receive({ type: 'start', id: 2, settings: SAMPLE_SETTINGS });
    expect(posted.at(-1)).toMatchObject({ type: 'error', id: 2, error: { code: 'worker-busy' } });
    loop.receive({ type: 'cancel', id: 9 });
    await new Promise((r) => setTimeout(r, 60));
    expect(posted.some((m) => m.type === 'done')).toBe(false);
    loop.receive({ type: 'cancel', id: 1 });
    await settled();
    const done = posted.at(-1)!;
    expect(done.type === 'done' && done.result.stopReason).toBe('cancelled');
  });

  it('answers an unreadable message with a protocol error for its id (or 0) and keeps running', () => {
    const { loop, posted } = loopWith(fakeEngine);
    loop.receive({ type: 'start', id: 3, settings: { model: 'x' } });
    loop.receive({ type: 'launch' });
    loop.receive(null);
    expect(posted).toMatchObject([
      { type: 'error', id: 3, error: { code: 'protocol', message: expect.stringContaining('settings.executionProvider: expected one of cpu') } },
      { type: 'error', id: 0, error: { code: 'protocol', message: 'Unsupported host message type "launch".' } },
      { type: 'error', id: 0, error: { code: 'protocol' } },
    ]);
  });

  it('reports an engine that fails to load as the run\'s error', async () => {
    const failing = Promise.reject(new Error('Cannot find module onnxruntime-node'));
    failing.catch(() => undefined);
    const { loop, posted, settled } = loopWith(failing);
    loop.receive({ type: 'start', id: 1, settings: SAMPLE_SETTINGS });
    await settled();
    expect(posted.at(-1)).toEqual({ type: 'error', id: 1, error: { code: 'internal', message: 'Error: Cannot find module onnxruntime-node' } });
  });
});
