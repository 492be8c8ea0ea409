import { requiredMultiple, type ShapeFailure, type ShapeRule } from './shape-rules.js';

/** The first quantize call that fails for one prompt length. */
export interface LengthFailure {
  readonly prompt: number;
  /** the sequence length being quantized */
  readonly seq: number;
  /** 0 for the prefill, else the decode step whose flush re-quantizes `seq` tokens */
  readonly step: number;
  readonly failure: ShapeFailure;
}

/**
 * The cache quantizes the whole prompt at prefill, then re-quantizes everything at each flush: with
 * single-token decoding at P + k·max(R, 2) tokens, decode step k·max(R, 2) (spec §1.3). Lengths mod
 * the rule's required multiple repeat within that many flushes, so checking that many is exhaustive.
 * `flushPeriod` null (an invalid residual length) checks the prefill only.
 */
export function firstFailingQuantize(rule: ShapeRule, prompt: number, flushPeriod: number | null): LengthFailure | null {
  const flushes = flushPeriod === null ? 0 : requiredMultiple(rule);
  for (let k = 0; k <= flushes; k++) {
    const step = k * (flushPeriod ?? 0);
    const seq = prompt + step;
    const failure = rule.check(seq);
    if (failure !== null) return { prompt, seq, step, failure };
  }
  return null;
}

/** Powers of two from 1 to 1024: the group sizes kvscope suggests. */
export const CANDIDATE_GROUP_SIZES: readonly number[] = Array.from({ length: 11 }, (_, i) => 2 ** i);
