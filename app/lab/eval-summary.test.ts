import { describe, expect, it } from 'vitest';
import { summarizeScores } from './eval-summary.js';
import { meanAndError, median, percentile } from './llama-stats.js';
import { emptyTokenScores } from './token-scores.js';

describe('llama.cpp\'s statistics', () => {
  it('mean ± standard error, with no error for 10 values or fewer', () => {
    const values = Array.from({ length: 20 }, (_, i) => i);
    const sum = values.reduce((a, b) => a + b, 0);
    const sum2 = values.reduce((a, b) => a + b * b, 0);
    const { mean, error } = meanAndError(sum, sum2, 20);
    expect(mean).toBe(9.5);
    // population variance 33.25, / 19
    expect(error).toBeCloseTo(Math.sqrt(33.25 / 19), 12);
    expect(meanAndError(10, 30, 10).error).toBe(0);
  });

  it('percentiles interpolate at fraction·(n − 1); the median of an even count is the mean of the middle two', () => {
    const sorted = [0, 1, 2, 3, 4];
    expect(percentile(sorted, 0.99)).toBeCloseTo(3.96, 12);
    expect(percentile(sorted, 0)).toBe(0);
    expect(percentile(sorted, 1)).toBe(4);
    expect(median([1, 2, 3, 10])).toBe(2.5);
  });
});

describe('summarizeScores', () => {
  it('identical distributions: ratio 1, ΔPPL 0, KLD 0, agreement 1, no Δp', () => {
    const scores = emptyTokenScores(50);
    for (let i = 0; i < 50; i++) {
      scores.nll[i] = 1 + (i % 7) / 3;
      scores.nllReference[i] = scores.nll[i]!;
      scores.top1[i] = 1;
    }
    const summary = summarizeScores(scores);
    expect(summary.ppl).toBe(summary.pplReference);
    expect(summary.pplRatio).toBe(1);
    expect(summary.deltaPpl).toBe(0);
    expect(summary.lnPplRatioError).toBe(0);
    expect(summary.pplCorrelation).toBeCloseTo(1, 12);
    expect(summary.kld).toMatchObject({ mean: 0, max: 0, p99: 0 });
    expect(summary.top1Agreement).toBe(1);
    expect(summary.top1AgreementError).toBe(0);
    expect(summary.deltaP).toMatchObject({ mean: 0, rms: 0, rmsError: 0 });
  });

  it('computes PPL as exp(mean NLL) and the KLD and Δp distributions', () => {
    const scores = emptyTokenScores(100);
    for (let i = 0; i < 100; i++) {
      scores.nll[i] = 2 + (i % 10) / 10;
      scores.nllReference[i] = 2;
      scores.kld[i] = i / 1000;
      scores.deltaP[i] = i % 2 === 0 ? 0.01 : -0.03;
      scores.top1[i] = i < 90 ? 1 : 0;
    }
    const s = summarizeScores(scores);
    expect(s.ppl).toBeCloseTo(Math.exp(2.45), 12);
    expect(s.pplReference).toBeCloseTo(Math.exp(2), 12);
    expect(s.pplRatio).toBeCloseTo(Math.exp(0.45), 12);
    expect(s.pplReferenceError).toBe(0);
    expect(s.kld.mean).toBeCloseTo(0.0495, 12);
    expect(s.kld.max).toBe(0.099);
    expect(s.kld.median).toBeCloseTo(0.0495, 12);
    expect(s.top1Agreement).toBe(0.9);
    expect(s.top1AgreementError).toBeCloseTo(Math.sqrt((0.9 * 0.1) / 99), 12);
    expect(s.deltaP.mean).toBeCloseTo(-0.01, 12);
    expect(s.deltaP.rms).toBeCloseTo(Math.sqrt((0.0001 + 0.0009) / 2), 12);
  });
});
