import { describe, expect, it } from 'vitest';
import { PromptLengthError, promptTokenLimit, promptTooLong } from './prompt-length.js';

describe('the prompt limit of a run (issue 24)', () => {
  it('is the positions left after max new tokens when the run refuses to pass them, else the prefill memory', () => {
    expect(promptTokenLimit({ maxPositions: 512, maxNewTokens: 4, refusePastPositions: true, memoryTokens: 12_834 })).toMatchObject({ tokens: 508, bound: 'positions' });
    expect(promptTokenLimit({ maxPositions: 512, maxNewTokens: 4, refusePastPositions: false, memoryTokens: 12_834 })).toMatchObject({ tokens: 12_834, bound: 'memory' });
    expect(promptTokenLimit({ maxPositions: 131_072, maxNewTokens: 64, refusePastPositions: true, memoryTokens: 12_834 })).toMatchObject({ tokens: 12_834, bound: 'memory' });
    // No positions in the config and a GPU: nothing to bound it by here.
    expect(promptTokenLimit({ maxPositions: null, maxNewTokens: 64, refusePastPositions: true, memoryTokens: null }).tokens).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('refuses max new tokens that alone reach past the positions, with the most that would run', () => {
    const refuse = (): unknown => promptTokenLimit({ maxPositions: 512, maxNewTokens: 1_000_000, refusePastPositions: true, memoryTokens: null });
    expect(refuse).toThrow(PromptLengthError);
    expect(refuse).toThrow(/--max-new-tokens 1000000 reaches past the model's max_position_embeddings = 512/);
    try {
      refuse();
    } catch (error) {
      expect((error as PromptLengthError).fix).toMatch(/at most 511 new tokens.*--allow-past-positions/);
    }
    expect(() => promptTokenLimit({ maxPositions: 512, maxNewTokens: 1_000_000, refusePastPositions: false, memoryTokens: null })).not.toThrow();
  });

  it('advises a length within the positions, never the memory bound past them', () => {
    const limit = promptTokenLimit({ maxPositions: 512, maxNewTokens: 4, refusePastPositions: true, memoryTokens: 12_834 });
    const error = promptTooLong(limit, { tokens: 2_000, exact: false, characters: 4_096, ofCharacters: 10_000_000 });
    expect(error.message).toBe('The prompt is more than 508 tokens (its first 4096 of 10000000 characters alone encode to 2000; the rest was not encoded); ' +
      'the model has max_position_embeddings = 512, and with up to 4 new tokens a prompt may take 508. The run was not started.');
    expect(error.fix).toMatch(/^Shorten the prompt to at most 508 tokens/);
    expect(error.fix).not.toMatch(/12834|12,834/);
  });
});
