import { describe, expect, it } from 'vitest';
import { SeededRandom } from './seeded-random.js';

describe('SeededRandom', () => {
  it('repeats its sequence for the same seed and stream, and differs otherwise', () => {
    const draw = (seed: number, stream: string): number[] => {
      const random = new SeededRandom(seed, stream);
      return Array.from({ length: 8 }, () => random.nextUint32());
    };
    expect(draw(7, 'a')).toEqual(draw(7, 'a'));
    expect(draw(7, 'a')).not.toEqual(draw(7, 'b'));
    expect(draw(7, 'a')).not.toEqual(draw(8, 'a'));
  });

  it('is pinned: the same numbers on every engine and every version of this file', () => {
    // Changing these changes every synthetic weight: bump SYNTHETIC_FORMAT_VERSION if you must.
    const random = new SeededRandom(20_260_101, 'lm_head');
    expect(Array.from({ length: 4 }, () => random.nextUint32())).toEqual([1482368880, 1298851974, 1777057156, 1309009299]);
  });

  it('fills a uniform distribution in (-bound, bound) with the right spread', () => {
    const values = new SeededRandom(1, 'spread').fillUniform(new Float32Array(100_000), 0.5);
    let sum = 0;
    let squares = 0;
    let largest = 0;
    for (const value of values) {
      largest = Math.max(largest, Math.abs(value));
      sum += value;
      squares += value * value;
    }
    expect(largest).toBeLessThan(0.5);
    expect(largest).toBeGreaterThan(0.499);
    const mean = sum / values.length;
    expect(Math.abs(mean)).toBeLessThan(0.005);
    // uniform(-b, b) has variance b²/3
    expect(squares / values.length - mean * mean).toBeCloseTo(0.25 / 3, 3);
  });

  it('draws integers below the bound, covering it', () => {
    const random = new SeededRandom(3);
    const seen = new Set(Array.from({ length: 1000 }, () => random.nextInt(10)));
    expect([...seen].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
