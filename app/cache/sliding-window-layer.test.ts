import { describe, expect, it } from 'vitest';
import { DynamicLayer } from './dynamic-layer.js';
import { KvCache } from './kv-cache.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from './cache-config.js';
import { SlidingWindowLayer, slidingWindowMemory, slidingWindows } from './sliding-window-layer.js';
import { trackDisposables } from './test-support/disposables.js';
import { randomTensor } from './test-support/tensors.js';

const track = trackDisposables();

describe('slidingWindows', () => {
  it('gives sliding and chunked layers transformers\' one window (sliding_window, else attention_chunk_size)', () => {
    const kinds = ['sliding_attention', 'full_attention', 'chunked_attention', 'mamba'];
    expect(slidingWindows(kinds, { slidingWindow: 128, attentionChunkSize: null })).toEqual([128, null, 128, null]);
    expect(slidingWindows(kinds, { slidingWindow: null, attentionChunkSize: 8192 })).toEqual([8192, null, 8192, null]);
    expect(slidingWindows(kinds, { slidingWindow: null, attentionChunkSize: null })).toEqual([null, null, null, null]);
  });
});

describe('SlidingWindowLayer', () => {
  it('returns the whole history to attention (what the graph is fed), as a DynamicLayer does', () => {
    const sliding = track(new SlidingWindowLayer(4));
    const dynamic = track(new DynamicLayer());
    for (const [i, n] of [6, 1, 1, 2].entries()) {
      const k = randomTensor([1, 2, n, 8], 50 + i);
      const v = randomTensor([1, 2, n, 8], 60 + i);
      const a = sliding.update(k, v);
      const b = dynamic.update(k, v);
      expect(Array.from(a.key.data)).toEqual(Array.from(b.key.data));
      expect(Array.from(a.value.data)).toEqual(Array.from(b.value.data));
    }
    expect(sliding.seqLength()).toBe(10);
    sliding.dispose();
    dynamic.dispose();
    expect(sliding.disposed).toBe(true);
  });

  it('counts what DynamicSlidingWindowLayer keeps: the last sliding_window − 1 tokens, and what the graph is fed apart', () => {
    const layer = track(new SlidingWindowLayer(4));
    layer.update(randomTensor([1, 2, 2, 8], 1), randomTensor([1, 2, 2, 8], 2));
    // fewer tokens than the window: all of them are kept
    expect(layer.memory()).toMatchObject({ tokens: 2, fullPrecisionTokens: 2, fullPrecisionBytes: 2 * 2 * 16 * 4, fedTokens: 2, windowTokens: 4 });
    layer.update(randomTensor([1, 2, 5, 8], 3), randomTensor([1, 2, 5, 8], 4));
    const memory = layer.memory();
    // 7 seen, 3 kept: [1, 2, 3, 8] keys and values in float32 = 3 · 2 · 16 · 4 bytes
    expect(memory).toMatchObject({
      tokens: 3, quantizedTokens: 0, fullPrecisionTokens: 3, valueCount: 96, fullPrecisionBytes: 384, totalBytes: 384,
      fp16BaselineBytes: 192, fp32BaselineBytes: 384, windowTokens: 4, fedTokens: 7, fedBytes: 7 * 2 * 16 * 4,
    });
    // kvscope itself holds the whole history (the graph needs it fed): its working bytes say so
    expect(memory.workingBytes).toBeGreaterThanOrEqual(7 * 2 * 16 * 4);
    layer.dispose();
  });

  it('is what a KvCache builds for a full-precision layer with a window', () => {
    const cache = new KvCache({ plan: ['dynamic', 'dynamic', 'none'], settings: DEFAULT_QUANTIZED_CACHE_SETTINGS, slidingWindows: [128, null, null] });
    expect(cache.layer(0)).toBeInstanceOf(SlidingWindowLayer);
    expect(cache.layer(1)).toBeInstanceOf(DynamicLayer);
    cache.dispose();
  });

  it('keeps memory of an empty layer empty', () => {
    expect(slidingWindowMemory({ tokens: 0, quantizedTokens: 0, fullPrecisionTokens: 0, valueCount: 0, codeBytes: 0, metadataBytes: 0, fullPrecisionBytes: 0, totalBytes: 0, fp16BaselineBytes: 0, fp32BaselineBytes: 0, workingBytes: 0 }, 8))
      .toMatchObject({ tokens: 0, totalBytes: 0, windowTokens: 8 });
  });
});
