import { describe, expect, it } from 'vitest';
import { checkPrefillMemory, longestPromptFitting, PrefillMemoryError, prefillPeakBytes, prefillScoreBytes, RUNTIME_BYTES_AT_PEAK } from './prefill-memory.js';

describe('the prefill memory check', () => {
  it('estimates three float32 score tensors of [heads, S, S]', () => {
    expect(prefillScoreBytes(8, 4002)).toBe(3 * 8 * 4002 * 4002 * 4);
    expect(prefillScoreBytes(8, longestPromptFitting(8, 2 ** 30))).toBeLessThanOrEqual(2 ** 30);
    expect(prefillScoreBytes(8, longestPromptFitting(8, 2 ** 30) + 1)).toBeGreaterThan(2 ** 30);
  });

  it('refuses a prompt whose scores exceed the free memory, with how long a prompt fits', () => {
    const check = (promptTokens: number) => () => checkPrefillMemory({ numAttentionHeads: 8, promptTokens, availableBytes: 16 * 2 ** 30, executionProvider: 'cpu' });
    expect(check(4000)).not.toThrow();
    let error: unknown;
    try {
      check(100_000)();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PrefillMemoryError);
    expect((error as PrefillMemoryError).message).toMatch(/^The prompt is 100000 tokens; prefilling it at once needs about 894 GiB .*more than the 12\.0 GiB a run may take \(75% of the 16\.0 GiB this machine has free\)/);
    expect((error as PrefillMemoryError).fix).toBe(`Shorten the prompt to at most about ${longestPromptFitting(8, 12 * 2 ** 30)} tokens, or free memory (fewer runs at once).`);
  });

  it('leaves GPU providers to their runtime', () => {
    expect(() => checkPrefillMemory({ numAttentionHeads: 8, promptTokens: 1e6, availableBytes: 1, executionProvider: 'webgpu' })).not.toThrow();
  });
});

describe('the prefill memory check with the model known (issue 23, point 4)', () => {
  // Qwen2.5-0.5B's geometry: 14 heads, vocab 151,936, 24 layers × 2 KV heads × 64, 1.98 GB of weights
  const qwen = (logitsLastRowOnly: boolean) => ({ weightsBytes: 1.98e9, vocabSize: 151_936, logitsLastRowOnly, kvBytesPerToken: 24 * 2 * 2 * 64 * 4 });

  it('counts the runtime, the weights, every logits row a graph without num_logits_to_keep computes, and the cache', () => {
    const scores = prefillScoreBytes(14, 2048);
    const all = prefillPeakBytes(14, 2048, qwen(false));
    expect(all - scores).toBe(RUNTIME_BYTES_AT_PEAK + 1.98e9 + 2048 * (3 * 151_936 * 4) + 2048 * 2 * 24 * 2 * 2 * 64 * 4);
    // the measurement: 4.34 GB above a 16-token run, every row computed; the estimate is within 5% above it
    const growth = (all - prefillPeakBytes(14, 16, qwen(false))) / 4.34e9;
    expect(growth).toBeGreaterThanOrEqual(1);
    expect(growth).toBeLessThan(1.05);
    // one row: the logits no longer grow with the prompt
    expect(prefillPeakBytes(14, 2048, qwen(true)) - prefillPeakBytes(14, 16, qwen(true))).toBe(scores - prefillScoreBytes(14, 16) + 2032 * 2 * 24 * 2 * 2 * 64 * 4);
  });

  it('says how long a prompt fits once the weights and logits are counted', () => {
    let error: unknown;
    try {
      checkPrefillMemory({ numAttentionHeads: 14, promptTokens: 8192, availableBytes: 8 * 2 ** 30, executionProvider: 'cpu', model: qwen(false) });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PrefillMemoryError);
    expect((error as PrefillMemoryError).message).toMatch(/for the weights, the attention scores .*, the logits \(8192 rows × 151936\) and the cache/);
    const fits = Number(/at most about (\d+) tokens/.exec((error as PrefillMemoryError).fix)?.[1]);
    const budget = 0.75 * 8 * 2 ** 30;
    expect(prefillPeakBytes(14, fits, qwen(false))).toBeLessThanOrEqual(budget);
    expect(prefillPeakBytes(14, fits + 1, qwen(false))).toBeGreaterThan(budget);
    expect(() => checkPrefillMemory({ numAttentionHeads: 14, promptTokens: fits, availableBytes: 8 * 2 ** 30, executionProvider: 'cpu', model: qwen(true) })).not.toThrow();
  });
});
