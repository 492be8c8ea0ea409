/**
 * torch's CPU float32 `sum` (and so `mean`), reproduced operation by operation.
 *
 * Why: HQQ's optimizer updates every zero point with `torch.mean(..., axis)` and stops early when
 * `torch.abs(W_f - W_r).mean()` stops decreasing (spec §3.2 step 3). A plain left-to-right float32 sum
 * differs from torch's in the last bits, which changes zero points and, through early stopping, the
 * step count (spec §3.2 "Properties a port must preserve"). This file mirrors ATen's
 * `native/cpu/SumKernel.cpp` (`cascade_sum`, `multi_row_sum`, `row_sum`, `vectorized_inner_sum`,
 * `vectorized_outer_sum`, `scalar_outer_sum`) and `TensorIteratorReduce.cpp` (`two_pass_reduction`,
 * `parallel_dim_reduction`) for the environment that made the golden vectors: 8-lane AVX2 vectors,
 * 2 intra-op threads, `GRAIN_SIZE` 32768. Checked against the per-step errors in the golden manifest.
 *
 * Values are read as `values[offset + i * stride]`; every partial sum is rounded to float32.
 */
const fround = Math.fround;

/** Lanes of ATen's `Vectorized<float>` on AVX2 (and on the default build). */
export const TORCH_VECTOR_LANES = 8;
/** `at::internal::GRAIN_SIZE`: reductions over fewer elements run on one thread. */
export const TORCH_GRAIN_SIZE = 32768;
/** Intra-op threads of the golden environment (`torch.set_num_threads(2)`). */
export const TORCH_THREADS = 2;
/** `multi_row_sum` accumulates 4 rows at a time ("ilp_factor" / "nrows"). */
const ILP = 4;
const LEVELS = 4;

/** `utils::CeilLog2` */
function ceilLog2(x: number): number {
  if (x <= 2) return 1;
  return 32 - Math.clz32(x - 1);
}

/** `multi_row_sum`'s level width: chunks of 2^power rows are summed, then the chunk sums, and so on. */
export function cascadeLevelPower(rows: number): number {
  return Math.max(4, Math.floor(ceilLog2(rows) / LEVELS));
}

/**
 * `multi_row_sum` for one column: `rows` values at `offset + r * stride`, summed in chunks of
 * 2^levelPower rows whose sums are summed in chunks again (4 levels).
 */
export function cascadeSum(values: ArrayLike<number>, offset: number, stride: number, rows: number): number {
  const power = cascadeLevelPower(rows);
  const step = 1 << power;
  const mask = step - 1;
  const acc = [0, 0, 0, 0];
  let i = 0;
  while (i + step <= rows) {
    for (let j = 0; j < step; j++, i++) acc[0] = fround(acc[0]! + values[offset + i * stride]!);
    for (let level = 1; level < LEVELS; level++) {
      acc[level] = fround(acc[level]! + acc[level - 1]!);
      acc[level - 1] = 0;
      if ((i & (mask << (level * power))) !== 0) break;
    }
  }
  for (; i < rows; i++) acc[0] = fround(acc[0]! + values[offset + i * stride]!);
  for (let level = 1; level < LEVELS; level++) acc[0] = fround(acc[0]! + acc[level]!);
  return acc[0]!;
}

/** `row_sum` with scalar accumulators: the row is read as a (-1, 4) array, 4 cascades, then combined. */
export function ilpRowSum(values: ArrayLike<number>, offset: number, stride: number, count: number): number {
  const rows = Math.floor(count / ILP);
  const partial = [0, 0, 0, 0];
  for (let k = 0; k < ILP; k++) partial[k] = cascadeSum(values, offset + k * stride, ILP * stride, rows);
  for (let i = rows * ILP; i < count; i++) partial[0] = fround(partial[0]! + values[offset + i * stride]!);
  for (let k = 1; k < ILP; k++) partial[0] = fround(partial[0]! + partial[k]!);
  return partial[0]!;
}

/**
 * `vectorized_inner_sum` for one contiguous run (the `size0 >= 8` case), or `scalar_inner_sum`
 * when the run is shorter than one vector. Lane l of the vector accumulator sums elements
 * `v * 8 + l` with `row_sum`; scalar leftovers come first, then the 8 lanes in order.
 */
export function innerSum(values: ArrayLike<number>, offset: number, count: number): number {
  const lanes = TORCH_VECTOR_LANES;
  if (count < lanes) return ilpRowSum(values, offset, 1, count);
  const vectors = Math.floor(count / lanes);
  let total = 0;
  for (let k = vectors * lanes; k < count; k++) total = fround(total + values[offset + k]!);
  for (let lane = 0; lane < lanes; lane++) total = fround(total + ilpRowSum(values, offset + lane, lanes, vectors));
  return total;
}

/**
 * A full reduction of `count` contiguous values (`tensor.sum()`): above GRAIN_SIZE, `two_pass_reduction`
 * splits the range into one chunk per thread and adds the per-thread results in order.
 */
export function fullSum(values: ArrayLike<number>, offset: number, count: number): number {
  if (count <= TORCH_GRAIN_SIZE) return innerSum(values, offset, count);
  const threads = Math.min(TORCH_THREADS, Math.ceil(count / TORCH_GRAIN_SIZE));
  const chunk = Math.ceil(count / threads);
  const buffer: number[] = [];
  for (let t = 0; t < TORCH_THREADS; t++) {
    const begin = t * chunk;
    buffer.push(t < threads && begin < count ? innerSum(values, offset + begin, Math.min(count, begin + chunk) - begin) : 0);
  }
  return ilpRowSum(buffer, 0, 1, buffer.length);
}

/** The ranges a full reduction of `count` values splits into (one per thread, see `fullSum`). */
export function fullSumChunks(count: number): [begin: number, end: number][] {
  if (count <= TORCH_GRAIN_SIZE) return [[0, count]];
  const threads = Math.min(TORCH_THREADS, Math.ceil(count / TORCH_GRAIN_SIZE));
  const chunk = Math.ceil(count / threads);
  const out: [number, number][] = [];
  for (let t = 0; t < threads; t++) out.push([t * chunk, Math.min(count, (t + 1) * chunk)]);
  return out;
}

/** Combines per-thread chunk sums the way `two_pass_reduction` does. */
export function combineChunkSums(chunkSums: readonly number[]): number {
  if (chunkSums.length === 1) return chunkSums[0]!;
  const buffer = [...chunkSums];
  while (buffer.length < TORCH_THREADS) buffer.push(0);
  return ilpRowSum(buffer, 0, 1, buffer.length);
}

/** Row sums of a row-major `[rows, cols]` grid (`mean(axis=1)`): one contiguous inner sum per row. */
export function rowSums(values: ArrayLike<number>, rows: number, cols: number, out: Float32Array): void {
  if (rows === 1) {
    out[0] = fullSum(values, 0, cols);
    return;
  }
  for (let r = 0; r < rows; r++) out[r] = innerSum(values, r * cols, cols);
}

/** How one column of a `[rows, cols]` grid is summed by `sum(axis=0)`. */
export type ColumnSumKind = 'cascade' | 'ilp';

/**
 * Which columns of a `[rows, cols]` grid `sum(axis=0)` sums with a plain `multi_row_sum` cascade and
 * which with `row_sum` (4 interleaved cascades). `parallel_dim_reduction` first splits the columns
 * between the threads (rounded to 32 columns); within each part `vectorized_outer_sum` handles
 * blocks of 32 columns as cascades and the rest with `row_sum` (`scalar_outer_sum` for parts narrower
 * than one vector: blocks of 4 columns, then `row_sum`).
 */
export function columnSumKinds(rows: number, cols: number): ColumnSumKind[] {
  const kinds: ColumnSumKind[] = new Array<ColumnSumKind>(cols).fill('ilp');
  const parts: [number, number][] = [];
  if (rows * cols < TORCH_GRAIN_SIZE || cols < TORCH_THREADS) {
    parts.push([0, cols]);
  } else {
    const chunk = Math.ceil(cols / TORCH_THREADS);
    for (let t = 0; t < TORCH_THREADS; t++) {
      let begin = t * chunk;
      let end = Math.min(cols, begin + chunk);
      if (begin >= cols) continue;
      begin -= begin % 32;
      if (end !== cols) end -= end % 32;
      if (begin < end) parts.push([begin, end]);
    }
  }
  for (const [begin, end] of parts) {
    const width = end - begin;
    const block = width >= TORCH_VECTOR_LANES ? 4 * TORCH_VECTOR_LANES : ILP;
    const cascaded = Math.floor(width / block) * block;
    for (let c = begin; c < begin + cascaded; c++) kinds[c] = 'cascade';
  }
  return kinds;
}

/** Column sums of a row-major `[rows, cols]` grid (`mean(axis=0)`). */
export function columnSums(values: ArrayLike<number>, rows: number, cols: number, out: Float32Array): void {
  if (cols === 1) {
    out[0] = fullSum(values, 0, rows);
    return;
  }
  const kinds = columnSumKinds(rows, cols);
  for (let c = 0; c < cols; c++) {
    out[c] = kinds[c] === 'cascade' ? cascadeSum(values, c, cols, rows) : ilpRowSum(values, c, cols, rows);
  }
}
