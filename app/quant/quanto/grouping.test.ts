import { describe, expect, it } from 'vitest';
import { QuantizationError } from '../../errors.js';
import { groupLayout, nearestDivisors, paramCount } from './grouping.js';

describe('groupLayout (quanto grouped.py, spec §3.1 step 1)', () => {
  it('axis 0: rows of g contiguous values, one parameter per row', () => {
    const layout = groupLayout([1, 4, 128, 64], 0, 32);
    expect([layout.rows, layout.cols]).toEqual([1024, 32]);
    expect(layout.paramShape).toEqual([1024, 1]);
    expect(layout.paramsPerColumn).toBe(false);
    expect(paramCount(layout)).toBe(1024);
  });

  it('axis -1: g token rows of one channel per column d·A + a, one parameter per column', () => {
    const layout = groupLayout([2, 3, 8, 16], -1, 4); // B·H·S = 48 → A = 12
    expect([layout.rows, layout.cols]).toEqual([4, 16 * 12]);
    expect([layout.channels, layout.blocks]).toEqual([16, 12]);
    expect(layout.paramShape).toEqual([1, 192]);
    expect(paramCount(layout)).toBe(192);
  });

  it('axis 0 with a single group switches to one parameter per element, like AffineOptimizer', () => {
    const layout = groupLayout([1, 2, 3, 4], 0, 24);
    expect([layout.rows, layout.cols]).toEqual([1, 24]);
    expect(layout.paramShape).toEqual([1, 24]);
    expect(layout.paramsPerColumn).toBe(true);
    expect([layout.channels, layout.blocks]).toEqual([24, 1]);
    // two batch entries make two groups: the usual per-row layout again
    expect(groupLayout([2, 2, 3, 4], 0, 24).paramShape).toEqual([2, 1]);
  });

  it('checks divisibility on the library\'s axis_numel: H·S·D for axis 0, B·H·S for axis -1', () => {
    expect(() => groupLayout([2, 1, 3, 4], 0, 12)).not.toThrow(); // 12 | 1·3·4 (not N = 24 only)
    expect(() => groupLayout([2, 1, 3, 4], 0, 24)).toThrow(/^Group size \(24\) must be a divisor of \(12\)/);
    expect(() => groupLayout([1, 2, 100, 128], -1, 64)).toThrow(/^Group size \(64\) must be a divisor of \(200\)/);
    expect(() => groupLayout([1, 0, 4, 4], 0, 4)).toThrow(/^Group size \(4\) must be a divisor of \(0\)/);
    expect(() => groupLayout([0, 2, 4, 4], 0, 4)).toThrow(QuantizationError);
    expect(() => groupLayout([1, 2, 4, 0], -1, 4)).toThrow(/head_dim axis is empty/);
  });
});

describe('nearestDivisors', () => {
  it('lists divisors closest to the target by ratio, ascending', () => {
    expect(nearestDivisors(200, 64, 4)).toEqual([25, 40, 50, 100]);
    expect(nearestDivisors(888, 64, 3)).toEqual([37, 74, 111]);
    expect(nearestDivisors(7, 64, 6)).toEqual([1, 7]);
    expect(nearestDivisors(0, 64, 6)).toEqual([]);
    for (const d of nearestDivisors(720720, 128, 8)) expect(720720 % d).toBe(0);
  });
});
