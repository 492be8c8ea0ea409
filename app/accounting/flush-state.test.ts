import { describe, expect, it } from 'vitest';
import { flushSchedule } from '../cache/flush-schedule.js';
import { flushState } from './flush-state.js';

describe('flushState', () => {
  it('equals the last row of the step-by-step state machine (flush-schedule.ts) for every prefill, residual and length tried', () => {
    for (const prefill of [1, 3, 32]) {
      for (const residual of [0, 1, 2, 3, 8, 128]) {
        const schedule = flushSchedule(prefill, residual, 700, 1);
        for (const steps of [0, 1, 2, 7, 127, 128, 129, 256, 700]) {
          const row = schedule.rows[steps]!;
          const flushes = schedule.flushSteps.filter((step) => step <= steps).length;
          expect(flushState(prefill, residual, steps), `prefill ${prefill}, R ${residual}, ${steps} steps`)
            .toEqual({ storeTokens: row.storeTokens, residualTokens: row.residualTokens, flushes });
        }
      }
    }
  });
});
