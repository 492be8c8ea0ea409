/**
 * quanto's MaxOptimizer (spec §3.1 step 2; `optimum/quanto/tensor/optimizers/max_optimizer.py`):
 * per group `scale = (max − min) / (qmax − qmin)` and `shift = −min`, computed in the tensor dtype T,
 * so each of the two operations of the scale rounds to T. The shift is a float, not a zero-point.
 */

/** Rounds a double to the tensor dtype: `Math.fround` for float32, `roundToFloat16` for float16 (spec §3.4). */
export type RoundToDtype = (x: number) => number;

/** `qmax − qmin` of qint2 / qint4: 3 or 15 (spec §3.1 "qtypes"). */
export function codeMax(bits: number): number {
  return (1 << bits) - 1;
}

/** `(max − min) / (2^bits − 1)` with a rounding to T after the subtraction and after the division. */
export function maxScale(min: number, max: number, qmax: number, round: RoundToDtype): number {
  return round(round(max - min) / qmax);
}

/**
 * The kernels find min and max with `<`/`>`, which cannot tell −0 from +0. kvscope orders −0 below +0
 * (IEEE 754 minimum/maximum, which the WebAssembly kernels' f32x4.min/max also follow), so both paths
 * agree bit for bit. Only the sign of a zero shift or scale depends on it. Called only when an extreme
 * is zero: scans `count` values from `start` with `stride`.
 */
export function signedZeroMin(x: Float32Array, start: number, stride: number, count: number): number {
  for (let i = 0, k = start; i < count; i++, k += stride) if (Object.is(x[k], -0)) return -0;
  return 0;
}

export function signedZeroMax(x: Float32Array, start: number, stride: number, count: number): number {
  for (let i = 0, k = start; i < count; i++, k += stride) if (Object.is(x[k], 0)) return 0;
  return -0;
}
