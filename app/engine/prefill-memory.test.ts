import { describe, expect, it } from 'vitest';
import { checkPrefillMemory, longestPromptFitting, PrefillMemoryError, prefillScoreBytes } from './prefill-memory.js';

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
