import { describe, expect, it } from 'vitest';
import { extractOutliers, outlierBytes, outlierCount, restoreOutliers } from './outliers.js';

describe('dense-and-sparse outliers (KVQuant)', () => {
  it('counts ⌊(1 − Q)·n⌋ outliers, exactly for decimal quantiles', () => {
    expect(outlierCount(0.99, 300)).toBe(3);
    expect(outlierCount(0.99, 100)).toBe(1);
    expect(outlierCount(0.99, 99)).toBe(0);
    expect(outlierCount(0.9, 1000)).toBe(100);
    expect(outlierCount(0.5, 7)).toBe(3);
    expect(outlierBytes(3, 2)).toEqual({ indexBytes: 12, valueBytes: 6 });
  });

  it('takes the largest magnitudes with their positions, clamps them to the largest one left, and restores them', () => {
    const data = new Float32Array([0.5, -9, 1, 3, -0.25, 7, -2, 0, 1.5, -1]);
    const original = data.slice();
    const outliers = extractOutliers(data, 0.8); // k = 2
    expect(Array.from(outliers.indices)).toEqual([1, 5]);
    expect(Array.from(outliers.values)).toEqual([-9, 7]);
    // the largest magnitude left is 3 (index 3): the outliers are clamped to ±3, sign kept
    expect(Array.from(data)).toEqual([0.5, -3, 1, 3, -0.25, 3, -2, 0, 1.5, -1]);
    restoreOutliers(outliers, data);
    expect(Array.from(data)).toEqual(Array.from(original));
  });

  it('breaks ties at the threshold by position and keeps the count exact', () => {
    const data = new Float32Array([2, -2, 1, 2, 0, 2]);
    const outliers = extractOutliers(data, 0.5); // k = 3 of four 2s
    expect(Array.from(outliers.indices)).toEqual([0, 1, 3]);
    expect(Array.from(data)).toEqual([2, -2, 1, 2, 0, 2]);
  });

  it('takes NaN first (it is kept exactly, not fed to the quantizer)', () => {
    const data = new Float32Array([1, Number.NaN, -5, 0.5]);
    const outliers = extractOutliers(data, 0.75); // k = 1
    expect(Array.from(outliers.indices)).toEqual([1]);
    expect(Number.isNaN(outliers.values[0])).toBe(true);
    expect(data[1]).toBe(5);
  });
});
