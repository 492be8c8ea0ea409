import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../app/cache/cache-config.js';
import { createRunRecord } from '../../app/record/run-record.js';
import { sampleResult } from '../../app/protocol/test-support/sample-messages.js';
import { describePrompt, describeRunLine, recordExtensions, recordIdentity, runExtensions } from './run-labels.js';
import type { RunSettings } from '../../app/engine/types.js';

const SETTINGS: RunSettings = {
  model: 'synthetic', executionProvider: 'cpu', cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
  prompt: 'Once', maxNewTokens: 8, sampling: { greedy: true, temperature: 1, topK: 50, topP: 1, seed: 0 }, reference: false,
};
const K8V4 = { ...SETTINGS, quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', extensions: { nbitsKey: 8 } } };

describe('run labels name the kvscope extensions', () => {
  it('a transformers run has none; a dynamic cache has none whatever the form holds', () => {
    expect(runExtensions(SETTINGS)).toEqual([]);
    expect(runExtensions({ ...K8V4, cacheMode: 'dynamic' })).toEqual([]);
    expect(describeRunLine(SETTINGS)).not.toContain('kvscope extensions');
  });

  it('the figure line (exported PNGs) names each active extension as such', () => {
    expect(runExtensions(K8V4).map((item) => item.id)).toEqual(['kv-bits-apart']);
    expect(describeRunLine(K8V4)).toMatch(/^hqq 4-bit · .* · cpu · kvscope extensions: K and V bits apart · greedy · 8 new tokens$/);
  });

  it('a record is labelled from its own extensions list', () => {
    const record = createRunRecord({ ...sampleResult(), settings: K8V4 }, { id: 'r1', createdAt: new Date(0), kvscopeVersion: '0' });
    expect(recordExtensions(record).map((item) => item.detail)).toEqual(['K 8 bits, V 4 bits']);
    expect(recordIdentity(record).settings).toContain('kvscope extensions: K and V bits apart');
  });
});

describe('describePrompt and the path in a figure line', () => {
  it('says the prompt as given and its padding, or that there is none', () => {
    expect(describePrompt(SETTINGS)).toBe('"Once", no padding');
    expect(describePrompt({ ...SETTINGS, padPromptTo: 32, promptFormat: 'chat' })).toBe('"Once" as a chat turn, left-padded to 32 tokens');
    expect(describePrompt({ ...SETTINGS, prompt: '', promptTokenIds: [1, 15043] })).toBe('token ids [1, 15043], no padding');
  });

  it('names where the cache was dequantized in the settings line of an exported chart', () => {
    const record = createRunRecord({ ...sampleResult(), dequantize: 'host' }, { id: 'r', createdAt: new Date(0), kvscopeVersion: '0' });
    expect(recordIdentity(record).settings).toContain('dequantized on the host');
  });
});
