/**
 * Copies of whole `[slabs, seq, width]` row ranges between KV tensors (slabs = batch·kvHeads,
 * width = headDim): the layout of every past and present tensor (spec §1.3, seq axis = -2).
 */
export type SlabArray = Float32Array | Uint16Array;

/**
 * Copies rows `[srcStart, srcStart + rows)` of every slab of `src` (seq length `srcSeq`) into rows
 * `[dstStart, dstStart + rows)` of `dst` (seq length `dstSeq`). Same element type on both sides.
 */
export function copySlabRows<T extends SlabArray>(
  src: T, srcSeq: number, srcStart: number, dst: T, dstSeq: number, dstStart: number, rows: number, slabs: number, width: number,
): void {
  const length = rows * width;
  for (let s = 0; s < slabs; s++) {
    const from = (s * srcSeq + srcStart) * width;
    dst.set(src.subarray(from, from + length) as never, (s * dstSeq + dstStart) * width);
  }
}
