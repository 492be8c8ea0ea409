import { describe, expect, it } from 'vitest';
import { createPrng } from './prng.js';
import { argmax, createSampler } from './sampler.js';

const sampling = (overrides: object = {}) => ({ greedy: false, temperature: 1, topK: 0, topP: 1, seed: 1, ...overrides });

describe('argmax', () => {
  it('takes the first of equal maxima and ignores NaN, as torch.argmax on finite rows', () => {
    expect(argmax(new Float32Array([1, 3, 3, 2]))).toBe(1);
    expect(argmax(new Float32Array([NaN, -1, -5]))).toBe(1);
    expect(argmax(new Float32Array([-Infinity, -Infinity]))).toBe(0);
  });
});

describe('createPrng', () => {
  it('is reproducible per seed and differs between seeds', () => {
    const a = createPrng(42);
    const b = createPrng(42);
    const c = createPrng(43);
    const sa = Array.from({ length: 8 }, () => a.next());
    expect(Array.from({ length: 8 }, () => b.next())).toEqual(sa);
    expect(Array.from({ length: 8 }, () => c.next())).not.toEqual(sa);
    for (const x of sa) expect(x >= 0 && x < 1).toBe(true);
  });
});

describe('createSampler', () => {
  const logits = new Float32Array([2, 1, 0.5, 0, -1, -3, 1.5, 0.2]);
  const draw = (settings: object, n = 4000): Map<number, number> => {
    const sampler = createSampler(sampling(settings));
    const counts = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const token = sampler.next(logits);
      counts.set(token, (counts.get(token) ?? 0) + 1);
    }
    return counts;
  };

  it('greedy is argmax', () => {
    expect(createSampler({ ...sampling(), greedy: true }).next(logits)).toBe(0);
  });

  it('top-k keeps the k best tokens only', () => {
    expect([...draw({ topK: 2 }).keys()].sort()).toEqual([0, 6]);
  });

  it('top-p keeps the smallest set whose mass reaches p (HF TopPLogitsWarper)', () => {
    // softmax: token 0 ≈ 0.36, token 6 ≈ 0.22, token 1 ≈ 0.13 → p = 0.5 keeps tokens 0 and 6.
    expect([...draw({ topP: 0.5 }).keys()].sort()).toEqual([0, 6]);
    expect([...draw({ topP: 0.3 }).keys()]).toEqual([0]);
  });

  it('follows the softmax frequencies at temperature 1 and sharpens at low temperature', () => {
    const counts = draw({}, 20000);
    const max = Math.max(...logits);
    const total = [...logits].reduce((sum, v) => sum + Math.exp(v - max), 0);
    expect(counts.get(0)! / 20000).toBeCloseTo(1 / total, 1);
    const cold = draw({ temperature: 0.05 }, 500);
    expect(cold.get(0)).toBe(500);
  });

  it('is reproducible with a seed', () => {
    const a = createSampler(sampling({ seed: 9, topK: 5 }));
    const b = createSampler(sampling({ seed: 9, topK: 5 }));
    const seqA = Array.from({ length: 50 }, () => a.next(logits));
    expect(Array.from({ length: 50 }, () => b.next(logits))).toEqual(seqA);
  });

  it('refuses invalid settings with transformers\' messages', () => {
    expect(() => createSampler(sampling({ temperature: 0 }))).toThrow(/`temperature` \(=0\) has to be a strictly positive float/);
    expect(() => createSampler(sampling({ topK: -1 }))).toThrow(/`top_k` has to be a strictly positive integer/);
    expect(() => createSampler(sampling({ topP: 0 }))).toThrow(/`top_p` has to be a float > 0 and < 1/);
    expect(() => createSampler(sampling({ seed: 1.5 }))).toThrow(/seed must be an integer/);
  });
});
