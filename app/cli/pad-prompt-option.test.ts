import { describe, expect, it } from 'vitest';
import { paddedSequenceLengths } from './pad-prompt-option.js';

describe('paddedSequenceLengths', () => {
  it('leaves the lengths as given without padding', () => {
    expect(paddedSequenceLengths(undefined, undefined)).toBeUndefined();
    expect(paddedSequenceLengths([5, 7], undefined)).toEqual([5, 7]);
  });

  it('raises the lengths shorter than the padding to it, keeps the longer ones, and checks the padding alone without lengths', () => {
    expect(paddedSequenceLengths([3, 5, 70], 64)).toEqual([64, 70]);
    expect(paddedSequenceLengths(undefined, 64)).toEqual([64]);
  });
});
