import { describe, expect, it } from 'vitest';
import type { EvalResult } from '../app/lab/eval-result.js';
import type { LabWorkerMessage } from '../app/lab/lab-protocol.js';
import { EvalCancelledError } from '../app/lab/eval-cancelled.js';
import { storiesEvalSettings } from '../app/node/lab/test-support/eval-settings.js';
import { LabLoop, type LabEngine } from './lab-loop.js';

function loop(engine: Partial<LabEngine>): { loop: LabLoop; messages: LabWorkerMessage[] } {
  const messages: LabWorkerMessage[] = [];
  const full: LabEngine = {
    runEval: async () => { throw new Error('not used'); },
    ensureReference: async () => ({ key: 'k', cached: false, ms: 1 }),
    ...engine,
  };
  return { loop: new LabLoop((message) => messages.push(message), async () => full), messages };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe('the lab worker\'s loop', () => {
  it('announces its protocol, runs one job at a time, and forwards progress', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const { loop: lab, messages } = loop({
      runEval: async (_settings, options) => {
        options.onProgress({ phase: 'eval', windowsDone: 1, windows: 2 });
        await gate;
        return { summary: { tokens: 1 } } as unknown as EvalResult;
      },
    });
    lab.announce();
    lab.receive({ type: 'evaluate', id: 1, settings: storiesEvalSettings(), options: {} });
    lab.receive({ type: 'reference', id: 2, settings: storiesEvalSettings(), options: {} });
    await settle();
    expect(messages.map((m) => m.type)).toEqual(['ready', 'error', 'progress']);
    expect(messages[1]).toMatchObject({ id: 2, error: { code: 'worker-busy' } });
    release();
    await settle();
    expect(messages.at(-1)).toMatchObject({ type: 'evaluated', id: 1 });
    lab.receive({ type: 'reference', id: 3, settings: storiesEvalSettings(), options: { intraOpNumThreads: 1 } });
    await settle();
    expect(messages.at(-1)).toEqual({ type: 'referenced', id: 3, reference: { key: 'k', cached: false, ms: 1 } });
  });

  it('a cancelled job ends with an error of code cancelled; a malformed message with a protocol error', async () => {
    const { loop: lab, messages } = loop({
      runEval: async (_settings, options) => {
        await settle();
        if (options.isCancelled()) throw new EvalCancelledError();
        throw new Error('not cancelled');
      },
    });
    lab.receive({ type: 'evaluate', id: 4, settings: storiesEvalSettings(), options: {} });
    lab.receive({ type: 'cancel', id: 4 });
    await settle();
    await settle();
    expect(messages.at(-1)).toMatchObject({ type: 'error', id: 4, error: { code: 'cancelled' } });
    lab.receive({ type: 'evaluate', id: 5, settings: { model: 1 }, options: {} });
    expect(messages.at(-1)).toMatchObject({ type: 'error', id: 0, error: { code: 'protocol' } });
  });

  it('hands a sweep job\'s job count to the engine (its sessions read the weights in place), and refuses a count below 1', async () => {
    const seen: (number | undefined)[] = [];
    const { loop: lab, messages } = loop({ ensureReference: async (_settings, options) => { seen.push(options.sweepJobs); return { key: 'k', cached: false, ms: 1 }; } });
    lab.receive({ type: 'reference', id: 6, settings: storiesEvalSettings(), options: { sweepJobs: 2 } });
    await settle();
    lab.receive({ type: 'reference', id: 7, settings: storiesEvalSettings(), options: {} });
    await settle();
    expect(seen).toEqual([2, undefined]);
    lab.receive({ type: 'reference', id: 8, settings: storiesEvalSettings(), options: { sweepJobs: 0 } });
    expect(messages.at(-1)).toMatchObject({ type: 'error', id: 0, error: { code: 'protocol' } });
  });
});
