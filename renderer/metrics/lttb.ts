/**
 * Largest-Triangle-Three-Buckets down-sampling (Steinarsson 2013), the algorithm ECharts applies with
 * `sampling: 'lttb'`. The renderer runs it before handing a series to ECharts so that a 10,000-step
 * run costs a chart no more than `threshold` points per update; the stacked memory series all use the
 * indices chosen on their total, so the stack stays aligned.
 *
 * Writes the chosen indices (ascending, first and last always kept) into `out` and returns how many.
 * Non-finite y values count as 0 for the triangle areas but keep their index.
 */
export function lttbIndices(xs: ArrayLike<number>, ys: ArrayLike<number>, count: number, threshold: number, out: Int32Array): number {
  if (count <= 0) return 0;
  if (threshold >= count || threshold < 3) {
    const n = Math.min(count, out.length);
    for (let i = 0; i < n; i++) out[i] = i;
    return n;
  }
  const limit = Math.min(threshold, out.length);
  const bucketSize = (count - 2) / (limit - 2);
  let a = 0;
  let written = 0;
  out[written++] = 0;
  for (let bucket = 0; bucket < limit - 2; bucket++) {
    // the average of the next bucket is the triangle's third corner
    const nextStart = Math.floor((bucket + 1) * bucketSize) + 1;
    const nextEnd = Math.min(Math.floor((bucket + 2) * bucketSize) + 1, count);
    let avgX = 0;
    let avgY = 0;
    for (let i = nextStart; i < nextEnd; i++) {
      avgX += xs[i]!;
      avgY += finite(ys[i]!);
    }
    const span = Math.max(1, nextEnd - nextStart);
    avgX /= span;
    avgY /= span;

    const start = Math.floor(bucket * bucketSize) + 1;
    const end = Math.floor((bucket + 1) * bucketSize) + 1;
    const ax = xs[a]!;
    const ay = finite(ys[a]!);
    let maxArea = -1;
    let chosen = start;
    for (let i = start; i < end; i++) {
      const area = Math.abs((ax - avgX) * (finite(ys[i]!) - ay) - (ax - xs[i]!) * (avgY - ay));
      if (area > maxArea) {
        maxArea = area;
        chosen = i;
      }
    }
    out[written++] = chosen;
    a = chosen;
  }
  out[written++] = count - 1;
  return written;
}

function finite(value: number): number {
  return Number.isFinite(value) ? value : 0;
}

/**
 * Interleaves the chosen rows of two columns into ECharts' flat typed-array form `[x0, y0, x1, y1, …]`
 * (a line series accepts a TypedArray as `data`). Returns a view of `out` of the right length.
 */
export function interleave(xs: Float64Array, ys: Float64Array, indices: Int32Array, count: number, out: Float64Array): Float64Array {
  for (let k = 0; k < count; k++) {
    const i = indices[k]!;
    out[2 * k] = xs[i]!;
    out[2 * k + 1] = ys[i]!;
  }
  return out.subarray(0, 2 * count);
}
