import { describe, expect, it, vi } from 'vitest';
import type { GenerationResult } from '../../engine/generation-result.js';
import { ApiError } from '../../protocol/api-error.js';
import { sampleResult } from '../../protocol/test-support/sample-messages.js';
import type { RunHandle, StartRun } from '../../protocol/run-handle.js';
import { storiesSettings } from '../test-support/stories.js';
import { defaultRunLimits, limitConcurrentRuns } from './run-limit.js';

/** Runs that end when the test says so. */
function controllableStart(): StartRun & { started: number; finish(index: number): void; cancels: number[] } {
  const finishers: ((result: GenerationResult) => void)[] = [];
  const start = Object.assign((): RunHandle => {
    const index = finishers.length;
    const done = new Promise<GenerationResult>((resolve) => finishers.push(resolve));
    start.started++;
    return { id: index + 1, done, cancel: () => void start.cancels.push(index), dispose: () => undefined };
  }, { started: 0, cancels: [] as number[], finish: (index: number) => finishers[index]!(sampleResult()) });
  return start;
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('the per-host run limit (issue 9, failure 8)', () => {
  it('defaults to one run per two cores and per 4 GiB, at least one; KVSCOPE_MAX_RUNS overrides', () => {
    expect(defaultRunLimits({ cores: 2, memoryBytes: 23 * 2 ** 30, env: {} }).maxConcurrent).toBe(1);
    expect(defaultRunLimits({ cores: 16, memoryBytes: 64 * 2 ** 30, env: {} }).maxConcurrent).toBe(8);
    expect(defaultRunLimits({ cores: 64, memoryBytes: 8 * 2 ** 30, env: {} }).maxConcurrent).toBe(2);
    expect(defaultRunLimits({ cores: 1, memoryBytes: 2 ** 30, env: {} }).maxConcurrent).toBe(1);
    expect(defaultRunLimits({ cores: 2, env: { KVSCOPE_MAX_RUNS: '3' } }).maxConcurrent).toBe(3);
    const warn = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(defaultRunLimits({ cores: 4, memoryBytes: 64 * 2 ** 30, env: { KVSCOPE_MAX_RUNS: 'lots' } }).maxConcurrent).toBe(2);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/ignored KVSCOPE_MAX_RUNS: KVSCOPE_MAX_RUNS must be a whole number of runs/));
    warn.mockRestore();
  });

  it('starts at most maxConcurrent runs, queues the next in order, and refuses past the queue with the limit', async () => {
    const start = controllableStart();
    const limited = limitConcurrentRuns(start, { maxConcurrent: 2, maxQueued: 2 });
    const handles = [0, 1, 2, 3].map(() => limited(storiesSettings(), {}));
    expect(start.started).toBe(2);
    expect(limited.waiting()).toBe(2);
    expect(() => limited(storiesSettings(), {})).toThrow(ApiError);
    expect(() => limited(storiesSettings(), {})).toThrow(/2 runs are going and 2 are waiting, the most this workbench takes \(2 at once, 2 waiting\)/);
    start.finish(0);
    await expect(handles[0]!.done).resolves.toMatchObject({ stopReason: sampleResult().stopReason });
    await flush();
    expect(start.started).toBe(3);
    start.finish(1);
    start.finish(2);
    await flush();
    expect(start.started).toBe(4);
    start.finish(3);
    await Promise.all(handles.map((handle) => handle.done));
    expect(limited.running()).toBe(0);
  });

  it('ends a waiting run that is cancelled without ever starting it, and passes a cancel on to a started one', async () => {
    const start = controllableStart();
    const limited = limitConcurrentRuns(start, { maxConcurrent: 1, maxQueued: 4 });
    const first = limited(storiesSettings(), {});
    const waiting = limited(storiesSettings(), {});
    waiting.cancel();
    await expect(waiting.done).rejects.toMatchObject({ code: 'cancelled', message: expect.stringMatching(/while it waited for a free slot/) });
    first.cancel();
    expect(start.cancels).toEqual([0]);
    start.finish(0);
    await first.done;
    await flush();
    expect(start.started).toBe(1); // the cancelled one never ran
  });
});
