import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import { fakeModel } from '../../renderer/test-support/fake-models.js';
import { whatIfVerdict } from './what-if-verdict.js';

const stories = fakeModel({ kind: 'folder', path: '/fake/models/stories260k' })!.config; // 512 positions, 4 KV heads × 8
const ask = (contextLength: number | string, promptTokens: number | string, patch: Partial<typeof DEFAULT_QUANTIZED_CACHE_SETTINGS> = {}) =>
  whatIfVerdict({ config: stories, cacheMode: 'quantized', settings: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, ...patch }, contextLength, promptTokens });

describe('the what-if argues back', () => {
  it('answers a sound question without a word', () => {
    expect(ask(256, 32)).toEqual({ errors: [], warnings: [] });
  });

  it('refuses non-positive, non-whole and empty lengths, and a prompt longer than its context', () => {
    expect(ask(-5, 32).errors[0]).toBe('Context length must be a whole number of tokens, at least 1; it is -5.');
    expect(ask('1e', 32).errors[0]).toBe('Context length must be a whole number of tokens, at least 1; it is "1e".');
    expect(ask(0, 32).errors).toHaveLength(1);
    expect(ask(256, '').errors[0]).toContain('it is empty');
    expect(ask(100, 200).errors[0]).toBe('The prompt (200 tokens) is longer than the context (100 tokens): a context holds the prompt and the tokens generated after it.');
    expect(ask(5_000_000, 32).errors[0]).toContain('beyond what the what-if estimates');
  });

  it('warns past max_position_embeddings, and still estimates', () => {
    const verdict = ask(100_000, 32);
    expect(verdict.errors).toEqual([]);
    expect(verdict.warnings[0]).toContain("past this model's max_position_embeddings = 512");
  });

  it('says why a refused configuration has no size, with the backend\'s message', () => {
    const verdict = ask(256, 5, { groupSize: 64 });
    expect(verdict.errors[0]).toMatch(/^These settings are refused at prefill \(5 tokens\), so the cache never holds 256 tokens: Group size \(64\) must be a divisor of \(160\)/);
    // the prefill passes at 6 tokens, but with residual 129 the flush at step 129 does not
    expect(ask(300, 6, { backend: 'hqq', groupSize: 64, residualLength: 129 }).errors[0]).toContain('at the flush of decode step 129 (135 tokens)');
    expect(whatIfVerdict({ config: stories, cacheMode: 'dynamic', settings: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS }, contextLength: 256, promptTokens: 5 }).errors).toEqual([]);
  });
});
