import { describe, expect, it } from 'vitest';
import { asSentence, withoutDocumentReferences } from './user-text.js';

describe('withoutDocumentReferences', () => {
  it('drops citations of kvscope\'s reference documents and keeps the rest of the sentence', () => {
    expect(withoutDocumentReferences('with q_group_size 64 the sequence length must be a multiple of 2 tokens (spec §3). Prompt lengths …'))
      .toBe('with q_group_size 64 the sequence length must be a multiple of 2 tokens. Prompt lengths …');
    expect(withoutDocumentReferences('(every max(R, 2) = 128 decode steps, spec §1.3), if generation gets that far'))
      .toBe('(every max(R, 2) = 128 decode steps), if generation gets that far');
    expect(withoutDocumentReferences('torch raises a RuntimeError (spec §3.2 step 4).')).toBe('torch raises a RuntimeError.');
    expect(withoutDocumentReferences('decode step (spec §3.2, inferred from hqq\'s code).')).toBe('decode step (inferred from hqq\'s code).');
    expect(withoutDocumentReferences('QuantizedCacheConfig/generate() API (spec §1.2, §1.7), which QuantizedCache refuses.')).toBe('QuantizedCacheConfig/generate() API, which QuantizedCache refuses.');
    expect(withoutDocumentReferences('(spec §1.3, consequence 2). A residual length of 0')).toBe('. A residual length of 0');
    expect(withoutDocumentReferences('Group size (64) must be a divisor of (160)')).toBe('Group size (64) must be a divisor of (160)');
  });
});

describe('asSentence', () => {
  it('ends a library message with a full stop where it has no end of its own', () => {
    expect(asSentence('Failed to get a WebGPU adapter: No supported adapters')).toBe('Failed to get a WebGPU adapter: No supported adapters.');
    expect(asSentence('not available in this build. ')).toBe('not available in this build.');
    expect(asSentence('is it installed?')).toBe('is it installed?');
    expect(asSentence('')).toBe('');
  });
});
