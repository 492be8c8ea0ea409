import { RetrievalTaskError, type CountTokens } from './retrieval-task.js';

/**
 * The most filler whose prompt still fits `targetTokens`. RULER grows the haystack step by step
 * until the prompt passes the length and steps back once (niah.py `generate_samples`); here the
 * filler doubles until it passes (so no probe tokenizes much more than twice the target), then a
 * binary search between the last fit and the first miss finds the same boundary in O(log n)
 * tokenizations instead of n/step, which matters at 8k+ tokens. Token counts grow with filler
 * almost monotonically (a BPE merge across a boundary can change a count by one), so the result is
 * within one unit of the target.
 */
export function fitFiller<T extends { readonly prompt: string }>(
  build: (units: number) => T,
  countTokens: CountTokens,
  targetTokens: number,
  limits: { readonly minUnits: number; readonly maxUnits: number; readonly unitName: string; readonly task: string },
): { readonly sample: T; readonly units: number; readonly promptTokens: number } {
  const measure = (units: number) => {
    const sample = build(units);
    return { units, sample, tokens: countTokens(sample.prompt) };
  };
  const probe = (units: number) => {
    const measured = measure(units);
    return measured.tokens <= targetTokens ? measured : null;
  };
  let fit = measure(limits.minUnits);
  if (fit.tokens > targetTokens) {
    throw new RetrievalTaskError(
      `${limits.task}: its prompt holds ${fit.tokens} tokens before any filler, more than the target ${targetTokens}; give a length of at least ${fit.tokens}`,
      fit.tokens,
    );
  }
  // doubling: `miss` is the first size found past the target (maxUnits + 1 stands for "none left")
  let miss = limits.maxUnits + 1;
  for (let step = 1; fit.units < limits.maxUnits; step *= 2) {
    const units = Math.min(fit.units + step, limits.maxUnits);
    const next = probe(units);
    if (next === null) {
      miss = units;
      break;
    }
    fit = next;
  }
  while (miss - fit.units > 1) {
    const middle = fit.units + Math.floor((miss - fit.units) / 2);
    const next = probe(middle);
    if (next === null) miss = middle;
    else fit = next;
  }
  if (fit.units === limits.maxUnits && limits.maxUnits > limits.minUnits) {
    throw new RetrievalTaskError(
      `${limits.task}: ${limits.maxUnits} ${limits.unitName} (all it has) make only ${fit.tokens} tokens, short of the target ${targetTokens}; give a length of at most ${fit.tokens}`,
    );
  }
  return { sample: fit.sample, units: fit.units, promptTokens: fit.tokens };
}

/** RULER's depth → insertion index: `int(len(document_sents) * (depth / 100))` (niah.py, essay haystack). */
export function depthIndex(units: number, depthPercent: number): number {
  return Math.floor((units * depthPercent) / 100);
}
