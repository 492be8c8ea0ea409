/**
 * optimum-quanto's `pack_weights` / `unpack` (spec §3.1 step 4; `optimum/quanto/tensor/packed.py`).
 *
 * Packing runs along dim 0 of the `[rows, cols]` code grid: with `k = 8 / bits` codes per byte and
 * `rowDim = ceil(rows / k)`, `packed[r, c] = OR_i grid[i·rowDim + r, c] << (bits·i)`. The first block of
 * rows lands in the low bits (the opposite of HQQ). Rows past the end contribute nothing.
 * Byte cost: `ceil(rows / k) · cols`.
 */
export function packedRowCount(rows: number, bits: number): number {
  return Math.ceil(rows / (8 / bits));
}

/** codes: `[rows, cols]`, one code per byte → packed `[ceil(rows / k), cols]` */
export function packWeights(codes: Uint8Array, rows: number, cols: number, bits: number): Uint8Array {
  const rowDim = packedRowCount(rows, bits);
  const packed = new Uint8Array(rowDim * cols);
  for (let r = 0; r < rows; r++) {
    const target = (r % rowDim) * cols;
    const shift = bits * Math.floor(r / rowDim);
    const source = r * cols;
    for (let c = 0; c < cols; c++) packed[target + c]! |= codes[source + c]! << shift;
  }
  return packed;
}

/** packed `[ceil(rows / k), cols]` → codes `[rows, cols]` */
export function unpackWeights(packed: Uint8Array, rows: number, cols: number, bits: number): Uint8Array {
  const rowDim = packedRowCount(rows, bits);
  const mask = (1 << bits) - 1;
  const codes = new Uint8Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const source = (r % rowDim) * cols;
    const shift = bits * Math.floor(r / rowDim);
    const target = r * cols;
    for (let c = 0; c < cols; c++) codes[target + c] = (packed[source + c]! >>> shift) & mask;
  }
  return codes;
}
