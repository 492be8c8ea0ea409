import { describe, expect, it } from 'vitest';
import type { StepMetrics } from '../../engine/types.js';
import { CancelDeadline } from './cancel-deadline.js';

const step = (totalMs: number, referenceMs?: number): StepMetrics => ({
  timings: { dequantizeMs: 0, modelMs: totalMs, quantizeMs: 0, totalMs, ...(referenceMs === undefined ? {} : { referenceMs }) },
}) as unknown as StepMetrics;

describe('the cancel deadline', () => {
  it('is the configured timeout until the run shows slower steps, then four of its slowest', () => {
    const deadline = new CancelDeadline();
    expect(deadline.timeoutMs(10_000)).toBe(10_000);
    deadline.observe([step(40), step(900)]);
    expect(deadline.timeoutMs(10_000)).toBe(10_000);
    // a big model: 6 s steps (with the reference lane's replay) are waited for, not cut off at 10 s
    deadline.observe([step(5_000, 1_000), step(3_000)]);
    expect(deadline.timeoutMs(10_000)).toBe(24_000);
    expect(deadline.message(24_000)).toMatch(/did not stop within 24 s of the cancel .*stuck/);
  });

  it('takes step times from a worker that does not time its own (a lab job\'s windows), and names the worker', () => {
    const deadline = new CancelDeadline();
    deadline.observeStepMs(2_600);
    deadline.observeStepMs(Infinity);
    expect(deadline.timeoutMs(10_000)).toBe(10_400);
    expect(deadline.message(10_400, 'lab worker', 'Nothing of the job is recorded.'))
      .toMatch(/^The lab worker did not stop within 10\.4 s of the cancel .*taken to be stuck.*Nothing of the job is recorded\.$/);
  });
});
