import { describe, expect, it } from 'vitest';
import { promptTokenLimit } from '../../engine/prompt-length.js';
import type { ModelTokenizer } from './load-tokenizer.js';
import { probePromptLength } from './prompt-probe.js';

/** One token per word, counting the characters it was given: how much work the probe did. */
function countingTokenizer(): { tokenizer: ModelTokenizer; encodedCharacters: () => number } {
  let characters = 0;
  const encode = (text: string): number[] => {
    characters += text.length;
    return text.split(' ').filter((word) => word !== '').map(() => 1);
  };
  return {
    tokenizer: { encode, encodeVerbatim: encode, chatTemplate: null, decode: () => '' },
    encodedCharacters: () => characters,
  };
}

describe('probePromptLength (issue 24)', () => {
  const limit = promptTokenLimit({ maxPositions: 512, maxNewTokens: 4, refusePastPositions: true, memoryTokens: null });

  it('refuses a 10 MB prompt from a prefix: the work is a few times the limit, not the prompt', () => {
    const { tokenizer, encodedCharacters } = countingTokenizer();
    const prompt = 'word '.repeat(2_000_000);
    expect(() => probePromptLength(tokenizer, prompt, limit)).toThrow(/^The prompt is more than 508 tokens \(its first 4096 of 10000000 characters alone encode to 820;/);
    expect(encodedCharacters()).toBe(4096);
  });

  it('doubles the prefix when the text is dense, and stops once it is past the limit', () => {
    const { tokenizer, encodedCharacters } = countingTokenizer();
    // 40 characters a token: the first prefix (4096) holds 103 tokens, the next ones 205, 410, 820.
    const prompt = `${'x'.repeat(39)} `.repeat(250_000);
    expect(() => probePromptLength(tokenizer, prompt, limit)).toThrow(/its first 32768 of 10000000 characters alone encode to 820/);
    expect(encodedCharacters()).toBe(4096 + 8192 + 16384 + 32768);
  });

  it('leaves a prompt within the limit to the run\'s own encoding (no probe for a short one, none past its end)', () => {
    const { tokenizer, encodedCharacters } = countingTokenizer();
    probePromptLength(tokenizer, 'Once upon a time', limit);
    expect(encodedCharacters()).toBe(0);
    // 125 tokens in 5000 characters: one prefix (103 tokens) passes, the next would be the whole prompt.
    probePromptLength(tokenizer, `${'x'.repeat(39)} `.repeat(125), limit);
    expect(encodedCharacters()).toBe(4096);
  });

  it('never cuts an emoji in two', () => {
    const { tokenizer } = countingTokenizer();
    const prompt = `${'a '.repeat(2047)}a😀 ${'word '.repeat(100_000)}`;
    expect(() => probePromptLength(tokenizer, prompt, limit)).toThrow(/its first 4095 of/);
  });
});
