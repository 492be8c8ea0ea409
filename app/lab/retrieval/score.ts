/*
 * Scoring as the sources score. RULER (NVIDIA/RULER scripts/eval/synthetic/constants.py) scores every
 * synthetic task with `string_match_all`: the fraction of references found in the prediction, both
 * lower-cased; its QA tasks use `string_match_part`: 1 when any reference is found. The prediction is
 * first cleaned by `postprocess_pred` (scripts/eval/evaluate.py): stripped, control characters turned
 * into newlines. RULER reports the mean × 100; kvscope keeps the fraction. The passkey test
 * (epfml/landmark-attention llama/run_test.py `test_model`) takes the first run of digits in the
 * response and compares it with the pass key.
 */
export type ScoreMetric = 'string_match_all' | 'string_match_part' | 'passkey';

/** `postprocess_pred`: strip, `[\x00-\x1f]` → "\n", strip. Python's strip() removes whitespace, as trim() does for ASCII. */
export function postprocessPrediction(prediction: string): string {
  // eslint-disable-next-line no-control-regex -- RULER's pattern is exactly the control characters
  return prediction.trim().replace(/[\x00-\x1f]/g, '\n').trim();
}

export function stringMatchAll(prediction: string, references: readonly string[]): number {
  if (references.length === 0) throw new RangeError('string_match_all needs at least one reference');
  const lower = prediction.toLowerCase();
  return references.filter((reference) => lower.includes(reference.toLowerCase())).length / references.length;
}

export function stringMatchPart(prediction: string, references: readonly string[]): number {
  if (references.length === 0) throw new RangeError('string_match_part needs at least one reference');
  const lower = prediction.toLowerCase();
  return references.some((reference) => lower.includes(reference.toLowerCase())) ? 1 : 0;
}

/** run_test.py: `int(re.search(r'\d+', response).group()) == pass_key`; no digits is a miss. */
export function passkeyMatch(prediction: string, passKey: string): number {
  const digits = /\d+/.exec(prediction);
  return digits !== null && BigInt(digits[0]) === BigInt(passKey) ? 1 : 0;
}

/** One sample's score in [0, 1]. */
export function scorePrediction(metric: ScoreMetric, prediction: string, references: readonly string[]): number {
  const cleaned = postprocessPrediction(prediction);
  switch (metric) {
    case 'string_match_all':
      return stringMatchAll(cleaned, references);
    case 'string_match_part':
      return stringMatchPart(cleaned, references);
    case 'passkey':
      if (references.length !== 1) throw new RangeError(`the passkey check compares one pass key, got ${references.length}`);
      return passkeyMatch(cleaned, references[0]!);
    default:
      throw new RangeError(`unknown metric ${String(metric satisfies never)}`);
  }
}
