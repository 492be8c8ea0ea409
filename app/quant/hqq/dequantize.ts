import type { KvDtype } from '../../tensor/kv-tensor.js';
import { roundToFloat16 } from '../../tensor/float16.js';
import type { HqqGrid } from './grid.js';
import { packedRowCount, unpackCodes } from './bitpack.js';
import { dequantizeWithKernel } from './dequantize-wasm.js';

/**
 * hqq `Quantizer.dequantize` (spec §3.2 step 5): `((W_q − zero) · scale).reshape(shape)` in the
 * compute dtype T, each op rounded to T; scale and zero are already values of T. The grid's flat
 * order is the tensor's, so `out` is written in place of the reshape.
 *
 * float32 runs in the WebAssembly kernel where it applies (dequantize-wasm.ts); otherwise codes are
 * read straight from the packed planes (no unpacked copy). In float16, where rounding is
 * costly, each group's 2^bits possible outputs are tabulated first when that is cheaper than rounding
 * every element.
 */
const fround = Math.fround;

export interface HqqDequantizeInput {
  readonly grid: HqqGrid;
  readonly nbits: number;
  readonly dtype: KvDtype;
  readonly packed: Uint8Array;
  readonly scale: Float32Array;
  readonly zero: Float32Array;
}

/** `useKernel: false` forces the JavaScript path (tests compare both). */
export function dequantizeHqqInto(input: HqqDequantizeInput, out: Float32Array, useKernel = true): void {
  const { grid, nbits, dtype } = input;
  if (out.length !== grid.count) {
    throw new RangeError(`dequantize needs an output of ${grid.count} values (the tensor's element count), got ${out.length}; allocate a Float32Array of that length.`);
  }
  if (useKernel && dequantizeWithKernel(input, out)) return;
  const levels = 1 << nbits;
  const table = dtype === 'float16' && levels <= grid.groupSize ? float16Table(input.scale, input.zero, levels) : undefined;
  const value = dtype === 'float32' ? float32Value : float16Value;
  if (nbits === 3) {
    // int32 words: unpack first (3-bit grids are small: they need axis 0, spec §3.2)
    const codes = unpackCodes(input.packed, grid.rows, grid.cols, 3);
    decodePlane(codes, 0, grid.rows, 0, 0x07, 0, input, out, table, value); // mask 7: the float16 table has 8 levels per group
    return;
  }
  const step = packedRowCount(grid.rows, nbits);
  const planes = 8 / nbits;
  const mask = levels - 1;
  for (let k = 0; k < planes; k++) decodePlane(input.packed, 0, step, 8 - nbits * (k + 1), mask, k * step, input, out, table, value);
}

type ValueOf = (code: number, zero: number, scale: number) => number;

function float32Value(code: number, zero: number, scale: number): number {
  return fround(fround(code - zero) * scale);
}

function float16Value(code: number, zero: number, scale: number): number {
  return roundToFloat16(roundToFloat16(code - zero) * scale);
}

/** Rows [0, rowCount) of `source` hold, at bit `shift`, the codes of grid rows firstRow + r. */
function decodePlane(
  source: Uint8Array,
  sourceRow: number,
  rowCount: number,
  shift: number,
  mask: number,
  firstRow: number,
  input: HqqDequantizeInput,
  out: Float32Array,
  table: Float32Array | undefined,
  value: ValueOf,
): void {
  const { grid, scale, zero } = input;
  const cols = grid.cols;
  const levels = mask + 1;
  for (let r = 0; r < rowCount; r++) {
    const from = (sourceRow + r) * cols;
    const to = (firstRow + r) * cols;
    if (grid.axis === 1) {
      const group = firstRow + r;
      if (table !== undefined) {
        const base = group * levels;
        for (let c = 0; c < cols; c++) out[to + c] = table[base + ((source[from + c]! >> shift) & mask)]!;
      } else if (value === float32Value) {
        const z = zero[group]!;
        const s = scale[group]!;
        for (let c = 0; c < cols; c++) out[to + c] = fround(((source[from + c]! >> shift) & mask) - z) * s;
      } else {
        for (let c = 0; c < cols; c++) out[to + c] = value((source[from + c]! >> shift) & mask, zero[group]!, scale[group]!);
      }
    } else if (table !== undefined) {
      for (let c = 0; c < cols; c++) out[to + c] = table[c * levels + ((source[from + c]! >> shift) & mask)]!;
    } else if (value === float32Value) {
      for (let c = 0; c < cols; c++) out[to + c] = fround(((source[from + c]! >> shift) & mask) - zero[c]!) * scale[c]!;
    } else {
      for (let c = 0; c < cols; c++) out[to + c] = value((source[from + c]! >> shift) & mask, zero[c]!, scale[c]!);
    }
  }
}

/** Per group, the float16 output of each code: `table[group · levels + code]`. */
function float16Table(scale: Float32Array, zero: Float32Array, levels: number): Float32Array {
  const table = new Float32Array(scale.length * levels);
  for (let g = 0; g < scale.length; g++) {
    for (let code = 0; code < levels; code++) table[g * levels + code] = float16Value(code, zero[g]!, scale[g]!);
  }
  return table;
}
