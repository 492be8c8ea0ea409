import { describe, expect, it } from 'vitest';
import { RingColumns } from './ring-columns.js';

describe('RingColumns', () => {
  it('holds up to its capacity, then overwrites the oldest rows', () => {
    const ring = new RingColumns(['x', 'y'] as const, 4);
    for (let i = 0; i < 6; i++) {
      const row = ring.nextRow();
      ring.columns.x[row] = i;
      ring.columns.y[row] = 10 * i;
    }
    const out = new Float64Array(4);
    expect({ length: ring.length, total: ring.total, dropped: ring.dropped, capacity: ring.capacity }).toEqual({ length: 4, total: 6, dropped: 2, capacity: 4 });
    expect(ring.copyColumn('x', out)).toBe(4);
    expect([...out]).toEqual([2, 3, 4, 5]);
    expect([ring.get('y', 0), ring.last('y'), ring.get('y', 4)]).toEqual([20, 50, NaN]);
  });

  it('allocates its columns once: writing rows never replaces the arrays', () => {
    const ring = new RingColumns(['v'] as const, 3);
    const column = ring.columns.v;
    for (let i = 0; i < 100; i++) ring.columns.v[ring.nextRow()] = i;
    expect(ring.columns.v).toBe(column);
    expect(column.length).toBe(3);
  });

  it('refuses a capacity below one row', () => {
    expect(() => new RingColumns(['v'] as const, 0)).toThrow(/capacity of at least 1/);
  });
});
