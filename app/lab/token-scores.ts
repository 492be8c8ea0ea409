import { klDivergence, logSoftmaxInto } from '../engine/divergence.js';
import { argmax } from '../engine/sampler.js';

/**
 * Per scored token, everything the summaries need (columns, one entry per prediction):
 * - nll: −log p_cache(true next token), nllReference: the same under the full-precision dynamic cache;
 * - kld: KL(p_reference ‖ p_cache) over the whole vocabulary, in nats;
 * - deltaP: p_cache(true) − p_reference(true) (llama.cpp's Δp);
 * - top1: 1 when both argmaxes agree (llama.cpp's "same top p").
 */
export interface TokenScores {
  readonly nll: Float64Array;
  readonly nllReference: Float64Array;
  readonly kld: Float64Array;
  readonly deltaP: Float64Array;
  readonly top1: Uint8Array;
}

export function emptyTokenScores(count: number): TokenScores {
  return { nll: new Float64Array(count), nllReference: new Float64Array(count), kld: new Float64Array(count), deltaP: new Float64Array(count), top1: new Uint8Array(count) };
}

/** Several windows' scores as one set of columns, in order. */
export function concatTokenScores(parts: readonly TokenScores[]): TokenScores {
  const total = parts.reduce((sum, part) => sum + part.nll.length, 0);
  const out = emptyTokenScores(total);
  let offset = 0;
  for (const part of parts) {
    out.nll.set(part.nll, offset);
    out.nllReference.set(part.nllReference, offset);
    out.kld.set(part.kld, offset);
    out.deltaP.set(part.deltaP, offset);
    out.top1.set(part.top1, offset);
    offset += part.nll.length;
  }
  return out;
}

/**
 * Scores one prediction: the reference's logits row against the cache's, for the true next token.
 * Both rows go through a float64 log-softmax (app/engine/divergence.ts, the reference lane's too), so
 * identical rows give KL exactly 0 and equal NLLs. llama.cpp drops reference probabilities below
 * e^−16 from its KL sum (its stored log-probabilities are 16-bit); kvscope keeps the reference rows in
 * float32 and sums every term, so its KL is the exact one.
 */
export class TokenScorer {
  #logP = new Float64Array(0);
  #logQ = new Float64Array(0);

  score(reference: Float32Array, tested: Float32Array, trueToken: number, into: TokenScores, index: number): void {
    if (this.#logP.length !== reference.length) {
      this.#logP = new Float64Array(reference.length);
      this.#logQ = new Float64Array(reference.length);
    }
    logSoftmaxInto(reference, this.#logP);
    logSoftmaxInto(tested, this.#logQ);
    const logPTrue = this.#logP[trueToken]!;
    const logQTrue = this.#logQ[trueToken]!;
    into.nll[index] = -logQTrue;
    into.nllReference[index] = -logPTrue;
    into.kld[index] = klDivergence(this.#logP, this.#logQ);
    into.deltaP[index] = Math.exp(logQTrue) - Math.exp(logPTrue);
    into.top1[index] = argmax(reference) === argmax(tested) ? 1 : 0;
  }
}
