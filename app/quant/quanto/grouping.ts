import { QuantizationError } from '../../errors.js';
import { quantoGroupSizeMessage } from '../library-messages.js';
import type { KvShape } from '../../tensor/kv-tensor.js';
import type { QuantoAxis } from './params.js';

/**
 * How optimum-quanto's `group(base, axis, group_size)` lays a `[B, H, S, D]` tensor out as a 2-D grid
 * (spec §3.1 step 1; `optimum/quanto/tensor/grouped.py`). Every quanto array is described in this grid:
 * codes are `[rows, cols]`, packing runs along its rows, and scale/shift broadcast against it.
 *
 * - axis 0: `grid = flat(x).reshape(N/g, g)`: row r holds the contiguous run `flat[r·g … r·g+g−1]`;
 *   one scale/shift per row, shape `[N/g, 1]`.
 * - axis −1: with `rows = x.reshape(B·H·S, D)` and `A = B·H·S/g`, `grid[j, d·A + a] = rows[a·g + j, d]`:
 *   column `d·A + a` holds g consecutive token rows of channel d; one scale/shift per column, `[1, D·A]`.
 * - axis 0 with a single group (N/g == 1): `AffineOptimizer.__call__` sees a kept axis of size 1, sets
 *   `axis = None`, and MaxOptimizer reduces over dim 0 of the `[1, g]` grid instead: one scale/shift per
 *   element (`[1, g]`), every range is 0 (spec §3.1, "AffineOptimizer.__call__").
 */
export interface GroupLayout {
  readonly axis: QuantoAxis;
  readonly groupSize: number;
  /** N = B·H·S·D */
  readonly elementCount: number;
  /** the grid `[rows, cols]`: axis 0 `[N/g, g]`, axis −1 `[g, D·A]`, one-group edge case `[1, g]` */
  readonly rows: number;
  readonly cols: number;
  /**
   * Column layouts only (`paramsPerColumn`): grid column `d·blocks + a` holds `rows` consecutive
   * rows of channel d inside block a, i.e. `grid[j, d·blocks + a] = flat[(a·rows + j)·channels + d]`.
   * axis −1: channels = D, blocks = A. One-group edge case: channels = g, blocks = 1 (each element is
   * its own column). Row layouts: grid = flat, channels = cols and blocks = rows.
   */
  readonly channels: number;
  readonly blocks: number;
  /** scale/shift shape as the library stores it: `[N/g, 1]`, `[1, D·A]`, or `[1, g]` in the one-group edge case */
  readonly paramShape: readonly [number, number];
  /** true when scale/shift index the grid's columns (axis −1, and the one-group edge case), false for rows */
  readonly paramsPerColumn: boolean;
}

export function groupLayout(shape: KvShape, axis: QuantoAxis, groupSize: number): GroupLayout {
  const [batch, heads, seq, headDim] = shape;
  const elementCount = batch * heads * seq * headDim;
  // grouped.py: axis_dim = base.shape[axis]; axis_numel = base.numel() // axis_dim.
  const axisDim = axis === 0 ? batch : headDim;
  if (axisDim === 0) {
    // Python would fail with ZeroDivisionError before its own check; say what is wrong instead.
    throw new QuantizationError(
      `quanto cannot quantize a KV tensor of shape [${shape.join(', ')}]: its ${axis === 0 ? 'batch' : 'head_dim'} axis is empty. ` +
        'Quantize only tensors that hold at least one token.',
    );
  }
  const axisNumel = elementCount / axisDim;
  if (groupSize > axisNumel || axisNumel % groupSize !== 0) {
    throw new QuantizationError(groupSizeMessage(shape, axis, groupSize, axisNumel));
  }
  if (axis === 0) {
    const rows = elementCount / groupSize;
    const oneGroup = rows === 1;
    return {
      axis, groupSize, elementCount, rows, cols: groupSize, channels: groupSize, blocks: oneGroup ? 1 : rows,
      paramShape: oneGroup ? [1, groupSize] : [rows, 1],
      paramsPerColumn: oneGroup,
    };
  }
  const blocks = axisNumel / groupSize;
  const cols = headDim * blocks;
  // With D·A == 1 the optimizer also drops the axis, but reducing over dim 0 is what axis −1 does anyway.
  return {
    axis, groupSize, elementCount, rows: groupSize, cols, channels: headDim, blocks,
    paramShape: [1, cols],
    paramsPerColumn: true,
  };
}

/** Number of scale/shift values a layout carries. */
export function paramCount(layout: GroupLayout): number {
  return layout.paramsPerColumn ? layout.cols : layout.rows;
}

/**
 * The library's exact text (grouped.py), then what it means for a KV tensor and what would work:
 * the group sizes nearest the requested one that divide the count, and the sequence-length multiple
 * that makes the requested size fit.
 */
function groupSizeMessage(shape: KvShape, axis: QuantoAxis, groupSize: number, axisNumel: number): string {
  const [batch, heads, seq, headDim] = shape;
  const library = quantoGroupSizeMessage(groupSize, axisNumel);
  const what =
    axis === 0
      ? `quanto axis 0 cuts each batch entry into runs of g consecutive values, so kv_heads·seq·head_dim = ${heads}·${seq}·${headDim} = ${axisNumel}`
      : `quanto axis -1 groups g consecutive token rows of one channel, so batch·kv_heads·seq = ${batch}·${heads}·${seq} = ${axisNumel}`;
  const otherFactor = axis === 0 ? heads * headDim : batch * heads;
  const seqMultiple = groupSize / gcd(groupSize, otherFactor);
  const nearby = nearestDivisors(axisNumel, groupSize, 6);
  const fixes = [
    nearby.length > 0 ? `use a group size that divides ${axisNumel} (nearest: ${nearby.join(', ')})` : '',
    `keep the group size and make seq a multiple of ${seqMultiple}`,
    axis === -1 ? 'or quantize along axis 0, which only needs kv_heads·seq·head_dim to be a multiple' : '',
  ].filter((s) => s.length > 0);
  return `${library}. ${what} must be a multiple of the group size. Fix: ${fixes.join('; ')}.`;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Up to `limit` divisors of n, the closest to `target` by ratio, in ascending order. */
export function nearestDivisors(n: number, target: number, limit: number): number[] {
  if (n <= 0) return [];
  const divisors: number[] = [];
  for (let d = 1; d * d <= n; d++) {
    if (n % d !== 0) continue;
    divisors.push(d);
    if (d * d !== n) divisors.push(n / d);
  }
  const distance = (d: number): number => Math.abs(Math.log(d / target));
  return divisors.sort((a, b) => distance(a) - distance(b) || a - b).slice(0, limit).sort((a, b) => a - b);
}
