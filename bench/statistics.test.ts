import { describe, expect, it } from 'vitest';
import { median, percentile } from './statistics.js';

describe('bench statistics', () => {
  it('median: the middle value, the mean of the middle two for an even count, unsorted input unchanged', () => {
    const values = [5, 1, 4, 2, 3];
    expect(median(values)).toBe(3);
    expect(values).toEqual([5, 1, 4, 2, 3]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNaN();
    // numeric order, not the default string order of sort()
    expect(median([10, 9, 100])).toBe(10);
  });

  it('percentile: nearest rank', () => {
    const values = Array.from({ length: 20 }, (_, i) => 20 - i); // 20 … 1
    expect(percentile(values, 95)).toBe(19);
    expect(percentile(values, 100)).toBe(20);
    expect(percentile(values, 0)).toBe(1);
    expect(percentile(values, 50)).toBe(10);
    expect(percentile([], 95)).toBeNaN();
  });
});
