/**
 * Next-token distribution comparisons for the reference lane, in float64: log-softmax of each row,
 * KL(reference ‖ quantized) = Σ p_ref · (log p_ref − log p_quant), in nats.
 */

/** log-softmax of `logits` into `out` (same length), stable (max subtracted first). */
export function logSoftmaxInto(logits: Float32Array, out: Float64Array): void {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  const logSum = max + Math.log(sum);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i]! - logSum;
}

/** KL(p ‖ q) from log-probabilities; 0·log 0 counts as 0; Infinity where q has no mass under p's. */
export function klDivergence(logP: Float64Array, logQ: Float64Array): number {
  let kl = 0;
  for (let i = 0; i < logP.length; i++) {
    const lp = logP[i]!;
    if (lp === -Infinity) continue;
    kl += Math.exp(lp) * (lp - logQ[i]!);
  }
  // Rounding can leave a tiny negative total for identical rows; KL is never negative.
  return Math.max(0, kl);
}
