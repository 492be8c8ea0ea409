import { describe, expect, it } from 'vitest';
import { flushSchedule, shouldFlush } from './flush-schedule.js';

describe('shouldFlush (spec §1.3: `keys.dim() == 4 and keys.shape[-2] + 1 >= residual_length`)', () => {
  it('never flushes from the 1-D empty residual, whatever R', () => {
    for (const r of [-1, 0, 1, 2, 128]) expect(shouldFlush(false, 0, r)).toBe(false);
  });

  it('flushes a 4-D residual once residual + 1 reaches R', () => {
    expect(shouldFlush(true, 2, 4)).toBe(false);
    expect(shouldFlush(true, 3, 4)).toBe(true);
    expect(shouldFlush(true, 130, 128)).toBe(true);
    expect(shouldFlush(true, 0, 1)).toBe(true);
    expect(shouldFlush(true, 0, 2)).toBe(false);
  });
});

describe('flushSchedule', () => {
  it('reproduces the §1.9 worked trace (P=10, R=4) row by row', () => {
    const { rows, flushSteps } = flushSchedule(10, 4, 5, 1);
    // [step, n, cumulative after, flush, store tokens, residual tokens], transcribed from the spec table
    expect(rows.map((r) => [r.step, r.tokens, r.cumulativeLength, r.flush, r.storeTokens, r.residualTokens])).toEqual([
      [0, 10, 10, false, 10, 0],
      [1, 1, 11, false, 10, 1],
      [2, 1, 12, false, 10, 2],
      [3, 1, 13, false, 10, 3],
      [4, 1, 14, true, 14, 0],
      [5, 1, 15, false, 14, 1],
    ]);
    expect(flushSteps).toEqual([4]);
  });

  it.each([0, 1, 2, 3, 4, 128])('single-token decode with R=%i flushes at max(R, 2)·k', (r) => {
    const steps = 600;
    const period = Math.max(r, 2);
    const expected = Array.from({ length: Math.floor(steps / period) }, (_, k) => period * (k + 1));
    expect(flushSchedule(7, r, steps, 1).flushSteps).toEqual(expected);
  });

  it('R ∈ {0, 1, 2} all alternate append and flush (R=0 is not "no residual")', () => {
    for (const r of [0, 1, 2]) {
      const { rows } = flushSchedule(3, r, 6, 1);
      expect(rows.slice(1).map((row) => row.flush)).toEqual([false, true, false, true, false, true]);
      expect(rows.slice(1).map((row) => row.residualTokens)).toEqual([1, 0, 1, 0, 1, 0]);
    }
  });

  it('five-token updates with R=128 first flush at update 27, with 130 residual tokens before it', () => {
    const { rows, flushSteps } = flushSchedule(40, 128, 60, 5);
    expect(flushSteps[0]).toBe(27);
    expect(rows[26]!.residualTokens).toBe(130); // the residual exceeds R with multi-token steps
    expect(rows[27]!.storeTokens).toBe(40 + 27 * 5);
    expect(flushSteps).toEqual([27, 54]);
  });

  it.each([0, 1, 2, 3, 4, 128])('five-token updates with R=%i: residual before each flush is the first multiple of 5 ≥ R−1', (r) => {
    const { rows, flushSteps } = flushSchedule(0, r, 400, 5);
    // After a flush (or the prefill) the next step always appends; then steps append until 5·j + 1 ≥ R.
    const appends = Math.max(1, Math.ceil((r - 1) / 5));
    expect(flushSteps[0]).toBe(appends + 1);
    expect(rows[appends]!.residualTokens).toBe(5 * appends);
    for (let i = 1; i < flushSteps.length; i++) expect(flushSteps[i]! - flushSteps[i - 1]!).toBe(appends + 1);
  });

  it('keeps cumulative = store + residual on every row', () => {
    for (const row of flushSchedule(13, 9, 200, 3).rows) {
      expect(row.storeTokens + row.residualTokens).toBe(row.cumulativeLength);
    }
  });
});
