/**
 * The statistics of llama.cpp's perplexity tool (`tools/perplexity/perplexity.cpp`, its KL-divergence
 * mode), recomputed from per-token values so that kvscope's tables read like llama.cpp's: the same
 * means, the same ± errors, the same percentile interpolation.
 */

export interface MeanWithError {
  readonly mean: number;
  readonly error: number;
}

/**
 * llama.cpp's `mean_and_uncertainty`: the mean and the standard error of the mean,
 * sqrt((E[x²] − E[x]²) / (n − 1)); 0 when the variance is not positive or n ≤ 10 (too few to say).
 */
export function meanAndError(sum: number, sumSquares: number, count: number): MeanWithError {
  if (count < 1) return { mean: 0, error: 0 };
  const mean = sum / count;
  const variance = sumSquares / count - mean * mean;
  return { mean, error: variance > 0 && count > 10 ? Math.sqrt(variance / (count - 1)) : 0 };
}

/** llama.cpp's `covariance` of two means: (E[ab] − E[a]E[b]) / (n − 1); 0 below 10 values. */
export function covarianceOfMeans(sumA: number, sumB: number, sumAB: number, count: number): number {
  if (count < 10) return 0;
  return (sumAB / count - (sumA / count) * (sumB / count)) / (count - 1);
}

/** llama.cpp's `percentile` of sorted values: linear interpolation at fraction·(n − 1). */
export function percentile(sorted: ArrayLike<number>, fraction: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  if (fraction <= 0) return sorted[0]!;
  if (fraction >= 1) return sorted[n - 1]!;
  const position = fraction * (n - 1);
  const low = Math.floor(position);
  const weight = position - low;
  return (1 - weight) * sorted[low]! + weight * sorted[Math.min(low + 1, n - 1)]!;
}

/** The middle value, or the mean of the two middle ones (llama.cpp's median). */
export function median(sorted: ArrayLike<number>): number {
  const n = sorted.length;
  if (n === 0) return 0;
  return n % 2 === 0 ? 0.5 * (sorted[n / 2]! + sorted[n / 2 - 1]!) : sorted[(n - 1) / 2]!;
}

export function sortedCopy(values: ArrayLike<number>): Float64Array {
  return Float64Array.from(values).sort();
}
