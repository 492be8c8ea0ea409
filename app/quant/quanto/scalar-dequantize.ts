import type { GroupLayout } from './grouping.js';
import type { RoundToDtype } from './max-optimizer.js';
import { packedRowCount } from './packing.js';

/**
 * Plain typed-array dequantize kernels (spec §3.1 step 5): `y = round_T(round_T(scale·q) − shift)`,
 * then `ungroup`. A group has only 2^bits possible outputs, so each kernel first tabulates them
 * (`[groups, 2^bits]`, the same two roundings, so bit-exact) and then only looks codes up. The tables
 * and the output are addressed through Int32Array views so values move as bit patterns, never
 * through a float conversion.
 */

/** `[groups, 2^bits]`: entry `[p, c]` is the dequantized value of code c under scale/shift p. */
export function dequantTable(scale: Float32Array, shift: Float32Array, bits: number, round: RoundToDtype): Int32Array {
  const levels = 1 << bits;
  const table = new Float32Array(scale.length * levels);
  for (let p = 0; p < scale.length; p++) {
    const s = scale[p]!;
    const z = shift[p]!;
    for (let c = 0; c < levels; c++) table[p * levels + c] = round(round(s * c) - z);
  }
  return new Int32Array(table.buffer);
}

/** Row layout (axis 0): packed byte `[pr, c]` holds the codes of rows `pr + i·rowDim`; output = grid order. */
export function dequantizeRowsScalar(
  packed: Uint8Array, table: Int32Array, layout: GroupLayout, bits: number, out: Float32Array,
): void {
  const { rows, cols } = layout;
  const rowDim = packedRowCount(rows, bits);
  const levels = 1 << bits;
  const mask = levels - 1;
  const out32 = new Int32Array(out.buffer, out.byteOffset, out.length);
  for (let r = 0; r < rows; r++) {
    const source = (r % rowDim) * cols;
    const bitShift = bits * Math.floor(r / rowDim);
    const tableBase = r * levels;
    const target = r * cols;
    for (let c = 0; c < cols; c++) out32[target + c] = table[tableBase + ((packed[source + c]! >>> bitShift) & mask)]!;
  }
}

/** Column layout (axis −1): writes the output in memory order, `out[(a·g + j)·D + d] = grid[j, d·A + a]`. */
export function dequantizeColumnsScalar(
  packed: Uint8Array, table: Int32Array, layout: GroupLayout, bits: number, out: Float32Array,
): void {
  const { rows: g, cols, blocks, channels } = layout;
  const rowDim = packedRowCount(g, bits);
  const levels = 1 << bits;
  const mask = levels - 1;
  const out32 = new Int32Array(out.buffer, out.byteOffset, out.length);
  for (let a = 0; a < blocks; a++) {
    for (let j = 0; j < g; j++) {
      const source = (j % rowDim) * cols + a;
      const bitShift = bits * Math.floor(j / rowDim);
      const target = (a * g + j) * channels;
      for (let d = 0; d < channels; d++) {
        const column = d * blocks + a;
        out32[target + d] = table[column * levels + ((packed[source + d * blocks]! >>> bitShift) & mask)]!;
      }
    }
  }
}
