import { describe, expect, it } from 'vitest';
import { interleave, lttbIndices } from './lttb.js';

describe('lttbIndices', () => {
  it('down-samples 10,000 points to the threshold, keeping both ends and a lone spike', () => {
    const n = 10_000;
    const xs = Float64Array.from({ length: n }, (_, i) => i);
    const ys = Float64Array.from({ length: n }, (_, i) => Math.sin(i / 300) + (i === 6_789 ? 50 : 0));
    const out = new Int32Array(500);
    const count = lttbIndices(xs, ys, n, 500, out);
    const chosen = [...out.subarray(0, count)];
    expect(count).toBe(500);
    expect(chosen[0]).toBe(0);
    expect(chosen.at(-1)).toBe(n - 1);
    expect(chosen).toContain(6_789);
    expect(chosen.every((index, k) => k === 0 || index > chosen[k - 1]!)).toBe(true);
  });

  it('passes short series through unchanged', () => {
    const out = new Int32Array(10);
    expect(lttbIndices([0, 1, 2], [5, 6, 7], 3, 10, out)).toBe(3);
    expect([...out.subarray(0, 3)]).toEqual([0, 1, 2]);
    expect(lttbIndices([], [], 0, 10, out)).toBe(0);
  });

  it('treats NaN values as zero for the areas but keeps them', () => {
    const xs = Float64Array.from({ length: 100 }, (_, i) => i);
    const ys = Float64Array.from({ length: 100 }, (_, i) => (i % 7 === 0 ? NaN : i));
    const out = new Int32Array(20);
    expect(lttbIndices(xs, ys, 100, 20, out)).toBe(20);
  });
});

describe('interleave', () => {
  it('writes ECharts flat [x0, y0, x1, y1, …] data for the chosen rows', () => {
    const out = new Float64Array(6);
    const data = interleave(Float64Array.of(0, 1, 2, 3), Float64Array.of(10, 11, 12, 13), Int32Array.of(0, 2, 3), 3, out);
    expect([...data]).toEqual([0, 10, 2, 12, 3, 13]);
  });
});
