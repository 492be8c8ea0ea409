import type { HqqGrid } from './grid.js';

/**
 * HQQ's starting point (spec §3.2 step 2, hqq >= 0.2.7), per group in float32:
 *
 *   denom = max - min
 *   s     = max_v / denom        torch evaluates `int / tensor` as reciprocal(denom) * max_v: two roundings
 *   s     = 1     where |denom| <= 1e-4   (0.2.7 "fix small denom edge case causing nan")
 *   s     = min(s, 2e4)
 *   z     = -min * s
 *
 * `s` is the inverse scale (codes are W·s + z); the stored scale is 1/s.
 */
const fround = Math.fround;
const SMALL_RANGE = fround(1e-4);
const MAX_INVERSE_SCALE = 2e4;

export interface HqqParams {
  /** per group, float32: the inverse scale s */
  readonly inverseScale: Float32Array;
  /** per group, float32, in code units: z (updated in place by the optimizer) */
  readonly zero: Float32Array;
}

export interface GroupRanges {
  readonly min: Float32Array;
  readonly max: Float32Array;
}

export function paramsFromRanges({ min, max }: GroupRanges, maxCode: number): HqqParams {
  const inverseScale = new Float32Array(min.length);
  const zero = new Float32Array(min.length);
  for (let k = 0; k < min.length; k++) {
    // A zero minimum may be +0 or −0 depending on the reduction order; take +0 so z's sign never
    // depends on the engine (torch's own choice is order-dependent too; codes are unaffected).
    const lo = min[k] === 0 ? 0 : min[k]!;
    const s = inverseScaleOf(lo, max[k]!, maxCode);
    inverseScale[k] = s;
    zero[k] = -lo * s;
  }
  return { inverseScale, zero };
}

/** The float32 inverse scale of one group with range [min, max] (see the file comment). */
export function inverseScaleOf(min: number, max: number, maxCode: number): number {
  const denom = fround(max - min);
  if (Math.abs(denom) <= SMALL_RANGE) return 1;
  const s = fround(fround(1 / denom) * maxCode);
  return s > MAX_INVERSE_SCALE ? MAX_INVERSE_SCALE : s;
}

/** Per-group min and max of finite values (`W.min(axis)`, `W.max(axis)` of the grid). */
export function groupRanges(values: Float32Array, grid: HqqGrid): GroupRanges {
  const min = new Float32Array(grid.groups).fill(Infinity);
  const max = new Float32Array(grid.groups).fill(-Infinity);
  if (grid.axis === 1) {
    for (let k = 0, i = 0; k < grid.groups; k++) {
      let lo = Infinity;
      let hi = -Infinity;
      for (const end = i + grid.groupSize; i < end; i++) {
        const v = values[i]!;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      min[k] = lo;
      max[k] = hi;
    }
  } else {
    for (let r = 0, i = 0; r < grid.rows; r++) {
      for (let c = 0; c < grid.cols; c++, i++) {
        const v = values[i]!;
        if (v < min[c]!) min[c] = v;
        if (v > max[c]!) max[c] = v;
      }
    }
  }
  return { min, max };
}
