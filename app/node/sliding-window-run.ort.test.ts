import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import type { RunSettings } from '../engine/types.js';
import { releaseCachedSessions } from './ort/session-cache.js';
import { runGeneration } from './run-generation.js';

afterAll(() => releaseCachedSessions());

/**
 * synthetic-hybrid (window 128, sliding at even layers) with the full-attention layers quantized:
 * its sliding layers are counted as transformers' DynamicSlidingWindowLayer keeps them, while the
 * graph is fed their whole history, and both figures are in every step's metrics.
 */
describe('a run of synthetic-hybrid, full-attention layers quantized', () => {
  it('stores the sliding layers\' last 127 tokens, feeds the graph all of them, and says both', async () => {
    const settings: RunSettings = {
      model: 'synthetic-hybrid', executionProvider: 'cpu', cacheMode: 'quantized',
      quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, layerPolicy: 'full-attention-only', residualLength: 32 },
      prompt: 'Once upon a time', maxNewTokens: 200, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false,
      // the host path feeds every layer's history in float32 (the in-graph path feeds the quantized layers' codes)
      dequantize: 'host',
    };
    const result = await runGeneration(settings);
    const last = result.steps.at(-1)!;
    const seen = last.seqLength;
    expect(seen).toBeGreaterThan(128);
    const sliding = last.kvBytes[0]!;
    const full = last.kvBytes[1]!;
    // [1, 4 heads, 127 tokens, 64 + 64] float32 kept; the graph is fed all `seen` tokens
    expect(sliding).toMatchObject({ windowTokens: 128, tokens: 127, fullPrecisionBytes: 127 * 4 * 128 * 4, fedTokens: seen, fedBytes: seen * 4 * 128 * 4 });
    expect(full.tokens).toBe(seen);
    expect(full.windowTokens).toBeUndefined();
    // what the model is fed each step: every layer's whole history, in float32
    const fed = last.kvBytes.reduce((sum, layer) => sum + (layer === null ? 0 : (layer.fedTokens ?? layer.tokens)), 0);
    expect(last.materializedKvBytes).toBe((fed - 8) * 4 * 128 * 4);
  });
});
