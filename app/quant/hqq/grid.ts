/**
 * HQQ's grouped 2-D view of a KV tensor (spec §3.2 step 1). Both layouts keep the tensor's flat
 * order, so element i of the tensor is element i of the row-major grid:
 *
 * - axis 1: `W.reshape(-1, g)` -> `[N/g, g]`; group k is row k, i.e. g consecutive elements.
 * - axis 0: `W.reshape(g, -1)` -> `[g, N/g]`; group k is column k, i.e. elements k, k + N/g, k + 2N/g, …
 *
 * Scale and zero have shape `[N/g, 1]` (axis 1) or `[1, N/g]` (axis 0). Packing runs along dim 0
 * (spec §3.2 step 4), so the packed row count depends on `rows`.
 */
export type HqqAxis = 0 | 1;

export interface HqqGrid {
  readonly axis: HqqAxis;
  readonly groupSize: number;
  /** N, the element count */
  readonly count: number;
  /** N / g */
  readonly groups: number;
  /** grid rows: N/g (axis 1) or g (axis 0) */
  readonly rows: number;
  /** grid columns: g (axis 1) or N/g (axis 0) */
  readonly cols: number;
}

export function hqqGrid(count: number, groupSize: number, axis: HqqAxis): HqqGrid {
  const groups = count / groupSize;
  return axis === 1
    ? { axis, groupSize, count, groups, rows: groups, cols: groupSize }
    : { axis, groupSize, count, groups, rows: groupSize, cols: groups };
}

/** `[N/g, 1]` (axis 1) or `[1, N/g]` (axis 0), as the golden `scale.npy` / `zero.npy`. */
export function paramShape(grid: HqqGrid): readonly [number, number] {
  return grid.axis === 1 ? [grid.groups, 1] : [1, grid.groups];
}

/** Group of flat element i. */
export function groupOf(grid: HqqGrid, i: number): number {
  return grid.axis === 1 ? Math.floor(i / grid.groupSize) : i % grid.cols;
}
