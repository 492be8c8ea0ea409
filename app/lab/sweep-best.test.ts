import { describe, expect, it } from 'vitest';
import { sweepBest } from './sweep-best.js';

const row = (cacheMode: string, kldMean: number, top1Agreement: number) =>
  ({ settings: { cacheMode } as never, result: { kldMean, top1Agreement } as never });

describe('sweepBest', () => {
  it('leaves the reference (the dynamic cache: KLD 0, top-1 100 %) out of the best values', () => {
    expect(sweepBest([row('quantized', 0.02, 0.9), row('dynamic', 0, 1), row('quantized', 0.005, 0.97)])).toEqual({ bestKld: 0.005, bestTop1: 0.97 });
  });

  it('has no best before a quantized point is measured', () => {
    expect(sweepBest([row('dynamic', 0, 1), { settings: null, result: null }])).toEqual({ bestKld: null, bestTop1: null });
  });
});
