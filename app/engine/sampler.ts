import { GenerationError } from './engine-errors.js';
import { createPrng, type Prng } from './prng.js';
import type { SamplingSettings } from './types.js';

/** Picks the next token from a row of logits. */
export interface TokenSampler {
  next(logits: Float32Array): number;
}

/** torch.argmax: the first index of the largest value; NaN never wins. */
export function argmax(logits: Float32Array): number {
  let best = -1;
  let bestValue = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]!;
    if (v > bestValue || (best === -1 && v === -Infinity)) {
      best = i;
      bestValue = v;
    }
  }
  return best === -1 ? 0 : best;
}

export function createSampler(settings: SamplingSettings): TokenSampler {
  if (settings.greedy) return { next: argmax };
  checkSamplingSettings(settings);
  return new WarpedSampler(settings, createPrng(settings.seed));
}

/**
 * transformers' sampling path: TemperatureLogitsWarper → TopKLogitsWarper → TopPLogitsWarper, then
 * softmax and one multinomial draw, in float64. Filtered tokens get probability 0, and at least one
 * token always survives (min_tokens_to_keep = 1).
 */
class WarpedSampler implements TokenSampler {
  readonly #settings: SamplingSettings;
  readonly #prng: Prng;
  #scores: Float64Array = new Float64Array(0);
  #order: Uint32Array = new Uint32Array(0);

  constructor(settings: SamplingSettings, prng: Prng) {
    this.#settings = settings;
    this.#prng = prng;
  }

  next(logits: Float32Array): number {
    const vocab = logits.length;
    if (this.#scores.length !== vocab) {
      this.#scores = new Float64Array(vocab);
      this.#order = new Uint32Array(vocab);
    }
    const scores = this.#scores;
    const { temperature, topK, topP } = this.#settings;
    for (let i = 0; i < vocab; i++) scores[i] = Number.isNaN(logits[i]!) ? -Infinity : logits[i]! / temperature;

    if (topK === 0 && topP >= 1) return this.#draw(scores, null, vocab);
    // Candidates in descending score order (ties: lower id first).
    const order = this.#order;
    for (let i = 0; i < vocab; i++) order[i] = i;
    order.sort((a, b) => scores[b]! - scores[a]! || a - b);
    let kept = vocab;
    if (topK > 0 && topK < vocab) {
      // HF keeps every token scoring at least the k-th score (ties at the threshold survive).
      const threshold = scores[order[topK - 1]!]!;
      kept = topK;
      while (kept < vocab && scores[order[kept]!]! >= threshold) kept++;
    }
    if (topP < 1) {
      // HF sorts ascending and removes tokens whose cumulative probability is <= 1 - top_p, i.e. a
      // token survives while the mass ranked above it is below top_p; the top token always survives.
      const max = scores[order[0]!]!;
      let total = 0;
      for (let r = 0; r < kept; r++) total += Math.exp(scores[order[r]!]! - max);
      let above = 0;
      let cut = 0;
      while (cut < kept && above < topP) {
        above += Math.exp(scores[order[cut]!]! - max) / total;
        cut++;
      }
      kept = Math.max(1, cut);
    }
    return this.#draw(scores, order, kept);
  }

  /** One multinomial draw over the first `kept` candidates (`order` null: all tokens in id order). */
  #draw(scores: Float64Array, order: Uint32Array | null, kept: number): number {
    const at = (r: number): number => (order === null ? r : order[r]!);
    let max = -Infinity;
    for (let r = 0; r < kept; r++) max = Math.max(max, scores[at(r)]!);
    let total = 0;
    for (let r = 0; r < kept; r++) total += Math.exp(scores[at(r)]! - max);
    let u = this.#prng.next() * total;
    for (let r = 0; r < kept; r++) {
      u -= Math.exp(scores[at(r)]! - max);
      if (u < 0) return at(r);
    }
    return at(kept - 1);
  }
}

/** transformers' own messages for bad warper arguments (STYLE.md §10), then kvscope's fix. */
export function checkSamplingSettings(settings: SamplingSettings): void {
  const { temperature, topK, topP, seed } = settings;
  if (!(typeof temperature === 'number' && Number.isFinite(temperature) && temperature > 0)) {
    throw new GenerationError(
      `\`temperature\` (=${temperature}) has to be a strictly positive float, otherwise your next token scores will be invalid. ` +
      "If you're looking for greedy decoding strategies, set `do_sample=False`.",
      'Use a temperature above 0, or greedy decoding.');
  }
  if (!(Number.isInteger(topK) && topK >= 0)) {
    throw new GenerationError(`\`top_k\` has to be a strictly positive integer, but is ${topK}`, 'Use 0 (no top-k filter) or a positive integer.');
  }
  if (!(typeof topP === 'number' && topP > 0 && topP <= 1)) {
    throw new GenerationError(`\`top_p\` has to be a float > 0 and < 1, but is ${topP}`, 'Use a value in (0, 1], 1 = no nucleus filter.');
  }
  if (!Number.isSafeInteger(seed)) {
    throw new GenerationError(`the sampling seed must be an integer, got ${seed}.`, 'Use an integer seed (the same seed reproduces the same tokens).');
  }
}
