import { RetrievalTaskError, type CountTokens } from './retrieval-task.js';

/**
 * The most filler whose prompt still fits `targetTokens`. RULER grows the haystack step by step
 * until the prompt passes the length and steps back once (niah.py `generate_samples`); a binary
 * search over the same unit finds that boundary in log₂(max) tokenizations instead of max/step, which
 * matters at 8k+ tokens. Token counts grow with filler almost monotonically (a BPE merge across a
 * boundary can change a count by one), so the result is within one unit of the target.
 */
export function fitFiller<T extends { readonly prompt: string }>(
  build: (units: number) => T,
  countTokens: CountTokens,
  targetTokens: number,
  limits: { readonly minUnits: number; readonly maxUnits: number; readonly unitName: string; readonly task: string },
): { readonly sample: T; readonly units: number; readonly promptTokens: number } {
  const smallest = build(limits.minUnits);
  const smallestTokens = countTokens(smallest.prompt);
  if (smallestTokens > targetTokens) {
    throw new RetrievalTaskError(
      `${limits.task}: its prompt holds ${smallestTokens} tokens before any filler, more than the target ${targetTokens}; give a length of at least ${smallestTokens}`,
      smallestTokens,
    );
  }
  let low = limits.minUnits; // fits
  let lowSample = smallest;
  let lowTokens = smallestTokens;
  let high = limits.maxUnits + 1; // treated as not fitting
  while (high - low > 1) {
    const middle = low + Math.floor((high - low) / 2);
    const sample = build(middle);
    const tokens = countTokens(sample.prompt);
    if (tokens <= targetTokens) {
      low = middle;
      lowSample = sample;
      lowTokens = tokens;
    } else {
      high = middle;
    }
  }
  if (low === limits.maxUnits && limits.maxUnits > limits.minUnits) {
    throw new RetrievalTaskError(
      `${limits.task}: ${limits.maxUnits} ${limits.unitName} (all it has) make only ${lowTokens} tokens, short of the target ${targetTokens}; give a length of at most ${lowTokens}`,
    );
  }
  return { sample: lowSample, units: low, promptTokens: lowTokens };
}

/** RULER's depth → insertion index: `int(len(document_sents) * (depth / 100))` (niah.py, essay haystack). */
export function depthIndex(units: number, depthPercent: number): number {
  return Math.floor((units * depthPercent) / 100);
}
