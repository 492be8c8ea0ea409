/**
 * KVQuant's dense-and-sparse split (kvscope extension `--outliers Q`; Hooper et al., arXiv 2401.18079
 * §3.4): the values of largest magnitude, those above the tensor's magnitude quantile Q, are taken
 * out of the dense tensor and kept exactly in a sparse list; the dense tensor is quantized with them
 * clamped to the largest remaining magnitude, so they no longer stretch their groups' ranges.
 *
 * The count is exact and data-independent, so memory can be predicted: k = ⌊(1 − Q)·n⌋ of the n
 * values. Ties at the threshold are broken by position (lower index first), NaN counts as the largest
 * magnitude (it is kept exactly rather than fed to the quantizer).
 */
export interface SparseOutliers {
  /** positions in the flat dense tensor, ascending (uint32: 4 bytes each) */
  readonly indices: Uint32Array;
  /** the exact values at those positions, representable in the tensor's dtype */
  readonly values: Float32Array;
}

/** Bytes of an outlier list in a tensor of dtype T: 4-byte indices plus one value in T each. */
export function outlierBytes(count: number, valueBytes: number): { readonly indexBytes: number; readonly valueBytes: number } {
  return { indexBytes: 4 * count, valueBytes: valueBytes * count };
}

/** k = ⌊(1 − Q)·n⌋, the number of outliers of an n-value tensor at quantile Q (0 < Q < 1). */
export function outlierCount(quantile: number, n: number): number {
  // (1 − 0.99)·300 is 2.9999999999999996 in binary; a relative nudge far below 1/n restores the integer.
  return Math.min(n, Math.floor((1 - quantile) * n * (1 + 1e-12)));
}

function magnitude(x: number): number {
  return Number.isNaN(x) ? Infinity : Math.abs(x);
}

/**
 * Splits `data` in place: returns the k largest-magnitude values with their positions, and clamps
 * those positions in `data` to ±(the largest magnitude left), keeping their sign. `data` must be
 * the caller's own copy.
 */
export function extractOutliers(data: Float32Array, quantile: number): SparseOutliers {
  const n = data.length;
  const k = outlierCount(quantile, n);
  if (k === 0) return { indices: new Uint32Array(0), values: new Float32Array(0) };
  const magnitudes = new Float64Array(n);
  for (let i = 0; i < n; i++) magnitudes[i] = magnitude(data[i]!);
  // The k-th largest magnitude: position n − k in ascending order.
  const threshold = selectKth(Float64Array.from(magnitudes), n - k);
  let above = 0;
  for (let i = 0; i < n; i++) if (magnitudes[i]! > threshold) above++;
  let tiesToTake = k - above;
  const indices = new Uint32Array(k);
  const values = new Float32Array(k);
  let taken = 0;
  for (let i = 0; i < n && taken < k; i++) {
    const m = magnitudes[i]!;
    if (m > threshold || (m === threshold && tiesToTake > 0)) {
      if (m === threshold) tiesToTake--;
      indices[taken] = i;
      values[taken] = data[i]!;
      taken++;
    }
  }
  // The largest magnitude that stays dense: the (k+1)-th largest overall.
  const remaining = k < n ? largestLeft(magnitudes, indices) : 0;
  for (let j = 0; j < k; j++) {
    const i = indices[j]!;
    const value = data[i]!;
    data[i] = Number.isNaN(value) || value >= 0 ? remaining : -remaining;
  }
  return { indices, values };
}

/** Writes the outliers back over a dequantized dense tensor. */
export function restoreOutliers(outliers: SparseOutliers, data: Float32Array): void {
  const { indices, values } = outliers;
  for (let j = 0; j < indices.length; j++) data[indices[j]!] = values[j]!;
}

function largestLeft(magnitudes: Float64Array, taken: Uint32Array): number {
  let max = 0;
  let next = 0;
  for (let i = 0; i < magnitudes.length; i++) {
    if (next < taken.length && taken[next] === i) {
      next++;
      continue;
    }
    if (magnitudes[i]! > max) max = magnitudes[i]!;
  }
  return max;
}

/** The value of rank `rank` (0-based, ascending) of `values`, which it reorders (Hoare quickselect). */
function selectKth(values: Float64Array, rank: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (rank <= j) hi = j;
    else if (rank >= i) lo = i;
    else return values[rank]!;
  }
  return values[rank]!;
}
