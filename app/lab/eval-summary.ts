import { covarianceOfMeans, meanAndError, median, percentile, sortedCopy } from './llama-stats.js';
import type { TokenScores } from './token-scores.js';

/** KL(reference ‖ cache) per token, in nats: llama.cpp's "KL divergence statistics". */
export interface KldSummary {
  readonly mean: number;
  readonly meanError: number;
  readonly median: number;
  readonly p90: number;
  readonly p95: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly min: number;
}

/** p_cache(true token) − p_reference(true token), as a probability (llama.cpp prints it in %). */
export interface DeltaPSummary {
  readonly mean: number;
  readonly meanError: number;
  readonly rms: number;
  readonly rmsError: number;
  readonly median: number;
  readonly p1: number;
  readonly p99: number;
  readonly min: number;
  readonly max: number;
}

/**
 * One window's or the whole text's figures, as llama.cpp's perplexity tool reports them in
 * KL-divergence mode (`Mean PPL(Q)`, `Mean PPL(base)`, `Cor(ln(PPL(Q)), ln(PPL(base)))`,
 * `Mean ln(PPL(Q)/PPL(base))`, `Mean PPL(Q)/PPL(base)`, `Mean PPL(Q)-PPL(base)`, the KLD and Δp
 * distributions, `Same top p`), each `…Error` the ± llama.cpp prints.
 */
export interface EvalSummary {
  /** scored predictions */
  readonly tokens: number;
  /** exp(mean NLL) under the cache */
  readonly ppl: number;
  readonly pplError: number;
  /** exp(mean NLL) under the full-precision dynamic cache */
  readonly pplReference: number;
  readonly pplReferenceError: number;
  /** ppl − pplReference */
  readonly deltaPpl: number;
  readonly deltaPplError: number;
  /** ppl / pplReference = exp(mean ln ratio) */
  readonly pplRatio: number;
  readonly pplRatioError: number;
  readonly lnPplRatio: number;
  readonly lnPplRatioError: number;
  /** Cor(ln PPL(Q), ln PPL(base)) of the per-token NLLs; 0 when undefined (no variance) */
  readonly pplCorrelation: number;
  readonly kld: KldSummary;
  /** share of predictions whose argmax agrees, 0…1 */
  readonly top1Agreement: number;
  readonly top1AgreementError: number;
  readonly deltaP: DeltaPSummary;
}

/** The summary of `scores` (all of them, or one window's), with llama.cpp's formulas (llama-stats.ts). */
export function summarizeScores(scores: TokenScores): EvalSummary {
  const n = scores.nll.length;
  let nll = 0, nll2 = 0, base = 0, base2 = 0, cross = 0, kld = 0, kld2 = 0, dp = 0, dp2 = 0, dp4 = 0, same = 0;
  for (let i = 0; i < n; i++) {
    const a = scores.nll[i]!;
    const b = scores.nllReference[i]!;
    const k = scores.kld[i]!;
    const d = scores.deltaP[i]!;
    nll += a; nll2 += a * a;
    base += b; base2 += b * b;
    cross += a * b;
    kld += k; kld2 += k * k;
    dp += d; dp2 += d * d; dp4 += d * d * d * d;
    same += scores.top1[i]!;
  }
  const logPpl = meanAndError(nll, nll2, n);
  const logBase = meanAndError(base, base2, n);
  const covariance = covarianceOfMeans(nll, base, cross, n);
  const ppl = Math.exp(logPpl.mean);
  const pplError = ppl * logPpl.error;
  const pplReference = Math.exp(logBase.mean);
  const pplReferenceError = pplReference * logBase.error;
  const lnPplRatio = logPpl.mean - logBase.mean;
  const lnPplRatioError = sqrtNonNegative(logPpl.error ** 2 + logBase.error ** 2 - 2 * covariance);
  const pplRatio = Math.exp(lnPplRatio);
  const correlationDenominator = logPpl.error * logBase.error;
  const mse = meanAndError(dp2, dp4, n);
  const rms = Math.sqrt(mse.mean);
  const top1Agreement = n === 0 ? 1 : same / n;
  const kldSorted = sortedCopy(scores.kld);
  const dpSorted = sortedCopy(scores.deltaP);
  const kldStats = meanAndError(kld, kld2, n);
  const dpStats = meanAndError(dp, dp2, n);
  return {
    tokens: n,
    ppl,
    pplError,
    pplReference,
    pplReferenceError,
    deltaPpl: ppl - pplReference,
    deltaPplError: sqrtNonNegative(pplError ** 2 + pplReferenceError ** 2 - 2 * ppl * pplReference * covariance),
    pplRatio,
    pplRatioError: pplRatio * lnPplRatioError,
    lnPplRatio,
    lnPplRatioError,
    pplCorrelation: correlationDenominator > 0 ? covariance / correlationDenominator : 0,
    kld: {
      mean: kldStats.mean,
      meanError: kldStats.error,
      median: median(kldSorted),
      p90: percentile(kldSorted, 0.9),
      p95: percentile(kldSorted, 0.95),
      p99: percentile(kldSorted, 0.99),
      p999: percentile(kldSorted, 0.999),
      max: n === 0 ? 0 : kldSorted[n - 1]!,
      min: n === 0 ? 0 : kldSorted[0]!,
    },
    top1Agreement,
    top1AgreementError: n > 1 ? Math.sqrt((top1Agreement * (1 - top1Agreement)) / (n - 1)) : 0,
    deltaP: {
      mean: dpStats.mean,
      meanError: dpStats.error,
      rms,
      // llama.cpp: 0.5 / rms · error(MSE); 0 for identical distributions instead of 0/0
      rmsError: rms > 0 ? (0.5 / rms) * mse.error : 0,
      median: median(dpSorted),
      p1: percentile(dpSorted, 0.01),
      p99: percentile(dpSorted, 0.99),
      min: n === 0 ? 0 : dpSorted[0]!,
      max: n === 0 ? 0 : dpSorted[n - 1]!,
    },
  };
}

/** Rounding can leave a tiny negative variance where the two series are identical. */
function sqrtNonNegative(value: number): number {
  return value > 0 ? Math.sqrt(value) : 0;
}
