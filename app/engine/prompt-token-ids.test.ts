import { describe, expect, it } from 'vitest';
import { parsePromptIds, promptIdsProblem, vocabularySize } from './prompt-token-ids.js';

describe('prompt ids as typed', () => {
  it('reads commas, spaces and a bracketed list', () => {
    expect(parsePromptIds('1,15043,727')).toEqual([1, 15043, 727]);
    expect(parsePromptIds(' 1, 15043 ,727 ')).toEqual([1, 15043, 727]);
    expect(parsePromptIds('1 15043\n727')).toEqual([1, 15043, 727]);
    expect(parsePromptIds('[1, 15043, 727]')).toEqual([1, 15043, 727]);
    expect(parsePromptIds('')).toEqual([]);
    expect(parsePromptIds('  ')).toEqual([]);
  });

  it('refuses what is not a list of ids', () => {
    for (const text of ['1,x', '-1', '1.5', '1,,2', 'one', '1e3', '[1, 2', '9999999999999999']) expect(parsePromptIds(text), text).toBeNull();
  });
});

describe('prompt ids against the vocabulary', () => {
  it('takes the graph\'s logits width when the header fixes it, else config\'s vocab_size', () => {
    expect(vocabularySize([1, 'sequence_length', 1000], 512)).toBe(1000);
    expect(vocabularySize(['batch', 'sequence_length', 'vocab'], 512)).toBe(512);
    expect(vocabularySize(undefined, null)).toBeNull();
  });

  it('names the ids outside it and the range, and refuses an empty prompt', () => {
    expect(promptIdsProblem([5, 6, 999], 1000)).toBeNull();
    expect(promptIdsProblem([5, 1000, 1200], 1000)).toEqual({
      message: 'prompt ids 1000, 1200 are not token ids of this model (its logits have 1000 entries).', fix: 'Give at least one id, each from 0 to 999.',
    });
    expect(promptIdsProblem([], 1000)?.message).toBe('the prompt ids are empty.');
    expect(promptIdsProblem([123456], null)).toBeNull();
    expect(promptIdsProblem([-1], null)?.fix).toBe('Give at least one id, each from 0 to the vocabulary size - 1.');
  });
});
