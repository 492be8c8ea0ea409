import { describe, expect, it } from 'vitest';
import { cascadeLevelPower, cascadeSum, columnSumKinds, columnSums, combineChunkSums, fullSum, fullSumChunks, ilpRowSum, innerSum, rowSums } from './torch-sum.js';

const fround = Math.fround;

/** A plain left-to-right float32 sum, for contrast. */
function sequential(values: ArrayLike<number>, offset = 0, stride = 1, count = values.length): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum = fround(sum + values[offset + i * stride]!);
  return sum;
}

describe('torch CPU float32 summation order', () => {
  it('sums short columns left to right', () => {
    const values = [0.1, 0.2, 0.3, 0.4, 0.5].map(fround);
    expect(cascadeSum(values, 0, 1, 5)).toBe(sequential(values));
  });

  it('sums chunks of 16 rows, then the chunk sums', () => {
    // left to right, every 1 after 1e8 is lost (ulp 8); cascaded, the last 16 ones are summed alone first
    const values = [1e8, ...new Array<number>(31).fill(1)];
    expect(sequential(values)).toBe(1e8);
    expect(cascadeSum(values, 0, 1, values.length)).toBe(1e8 + 16);
    expect(cascadeLevelPower(32)).toBe(4);
    expect(cascadeLevelPower(2 ** 20)).toBe(5);
  });

  it('interleaves four accumulators in row_sum', () => {
    const values = [1e8, 1, 1, 1, -1e8, 1, 1, 1].map(fround);
    // lanes: (1e8 + −1e8), (1 + 1), (1 + 1), (1 + 1), then combined in order
    expect(ilpRowSum(values, 0, 1, 8)).toBe(6);
    expect(sequential(values)).not.toBe(6);
  });

  it('adds the 8 AVX2 lanes of a contiguous run last, after scalar leftovers', () => {
    const values = new Float32Array(20);
    values[0] = 1e8;
    values[8] = -1e8;
    values.fill(0.5, 1, 8);
    values.fill(0.25, 16, 20);
    // lane 0: 1e8 + −1e8 = 0; lanes 1..7: 0.5 each; leftovers 16..19 first: 1
    expect(innerSum(values, 0, 20)).toBe(1 + 7 * 0.5);
    expect(sequential(values)).not.toBe(1 + 7 * 0.5);
  });

  it('splits reductions above 32768 values between two threads', () => {
    expect(fullSumChunks(32768)).toEqual([[0, 32768]]);
    expect(fullSumChunks(40000)).toEqual([[0, 20000], [20000, 40000]]);
    const values = new Float32Array(40000).fill(0.1);
    expect(fullSum(values, 0, 40000)).toBe(combineChunkSums([innerSum(values, 0, 20000), innerSum(values, 20000, 20000)]));
  });

  it('assigns columns to cascades and row_sums as parallel_dim_reduction does', () => {
    // serial (N < 32768): blocks of 32 columns are cascades, the rest row_sum
    const serial = columnSumKinds(64, 400);
    expect(serial.slice(0, 384).every((k) => k === 'cascade')).toBe(true);
    expect(serial.slice(384).every((k) => k === 'ilp')).toBe(true);
    // two threads: [0, 288) and [288, 600); 312 = 9·32 + 24 leaves columns 576..599
    const parallel = columnSumKinds(64, 600);
    expect(parallel.slice(0, 576).every((k) => k === 'cascade')).toBe(true);
    expect(parallel.slice(576).every((k) => k === 'ilp')).toBe(true);
    // narrower than one vector: blocks of 4 columns, then row_sum
    expect(columnSumKinds(8, 6)).toEqual(['cascade', 'cascade', 'cascade', 'cascade', 'ilp', 'ilp']);
  });

  it('sums rows and columns of a grid with those rules', () => {
    const grid = Float32Array.from({ length: 64 * 40 }, (_, i) => fround(Math.sin(i) * 1000));
    const rows = new Float32Array(40);
    rowSums(grid, 40, 64, rows);
    expect(rows[3]).toBe(innerSum(grid, 3 * 64, 64));
    const cols = new Float32Array(40);
    columnSums(grid, 64, 40, cols);
    expect(cols[0]).toBe(cascadeSum(grid, 0, 40, 64));
    expect(cols[39]).toBe(ilpRowSum(grid, 39, 40, 64));
  });
});
