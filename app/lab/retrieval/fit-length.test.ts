import { describe, expect, it } from 'vitest';
import { depthIndex, fitFiller } from './fit-length.js';
import type { RetrievalTaskError } from './retrieval-task.js';
import { countWords } from './test-support.js';

/** A prompt of a 3-word question and `units` filler words of 2 tokens each. */
const build = (units: number) => ({ prompt: `what is it ${'a b '.repeat(units)}` });
const limits = { minUnits: 0, maxUnits: 10_000, unitName: 'pairs', task: 'test' };

describe('fitting the filler to a token target', () => {
  it.each([3, 4, 5, 100, 101, 4097])('finds the most filler within %d tokens', (target) => {
    const probed: number[] = [];
    const counting = (text: string) => {
      const tokens = countWords(text);
      probed.push(tokens);
      return tokens;
    };
    const fit = fitFiller(build, counting, target, limits);
    expect(fit.units).toBe(Math.floor((target - 3) / 2));
    expect(fit.promptTokens).toBe(3 + 2 * fit.units);
    expect(fit.sample.prompt).toBe(build(fit.units).prompt);
    // doubling then halving: no probe much past the target, and few of them
    expect(Math.max(...probed)).toBeLessThanOrEqual(2 * target + 3);
    expect(probed.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(target + 2)) + 2);
  });

  it('says what length to give when the bare prompt or all the filler misses the target', () => {
    expect(() => fitFiller(build, countWords, 2, limits)).toThrow(/holds 3 tokens before any filler.*at least 3/);
    try {
      fitFiller(build, countWords, 2, limits);
    } catch (error) {
      expect((error as RetrievalTaskError).leastTargetTokens).toBe(3);
    }
    expect(() => fitFiller(build, countWords, 100, { ...limits, maxUnits: 10 })).toThrow(/10 pairs \(all it has\) make only 23 tokens.*at most 23/);
  });

  it('places the depth as RULER does: int(n · depth / 100)', () => {
    expect([0, 25, 50, 99, 100].map((depth) => depthIndex(7, depth))).toEqual([0, 1, 3, 6, 7]);
  });
});
