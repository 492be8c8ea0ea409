import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import { QuantizedLayer } from '../cache/quantized-layer.js';
import { quantizerFor } from '../quant/registry.js';
import { kvTensor } from '../tensor/kv-tensor.js';
import { fakeModel } from '../../renderer/test-support/fake-models.js';
import { estimateKvMemory } from './memory-what-if.js';

const synthetic = fakeModel({ kind: 'synthetic' })!.config; // 8 layers, 4 KV heads × head_dim 64, float32
const hybrid = fakeModel({ kind: 'synthetic-hybrid' })!.config; // sliding at even layers

function estimate(settings: Partial<QuantizedCacheSettings>, config = synthetic, cacheMode: 'quantized' | 'dynamic' = 'quantized') {
  return estimateKvMemory({
    config, kvDtype: 'float32', cacheMode, settings: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, ...settings },
    promptTokens: 32, contextLength: 1024,
  });
}

/*
 * Hand arithmetic for 32 prompt tokens + 992 decoded = 1024, residual 128 (spec §1.3): the prefill
 * quantizes 32; flushes at decode steps 128, 256, …, 896 (7 of them) leave 32 + 896 = 928 tokens in
 * the store and 992 − 896 = 96 in the residual. One K (or V) store holds 1·4·928·64 = 237,568 values.
 */
describe('memory what-if', () => {
  it('quanto 4-bit, axis 0, group 64: codes, scale/shift and the float32 residual', () => {
    const result = estimate({});
    // codes: 237,568 values · 4 bits / 8 = 118,784 B per store, K and V → 237,568 B
    // scale + shift: 237,568 / 64 = 3,712 groups · 2 params · 4 B (float32) = 29,696 B per store → 59,392 B
    // residual: 96 tokens · 4 heads · (64 + 64) · 4 B = 196,608 B
    expect(result).toMatchObject({ quantizedTokens: 928, residualTokens: 96, flushes: 7 });
    expect(result.rows).toHaveLength(1);
    expect(result.rows[0]!.perLayer).toMatchObject({
      tokens: 1024, codeBytes: 237_568, metadataBytes: 59_392, fullPrecisionBytes: 196_608, totalBytes: 493_568,
      valueCount: 524_288, fp16BaselineBytes: 1_048_576,
    });
    expect(result.total).toMatchObject({ totalBytes: 8 * 493_568, fp16BaselineBytes: 8 * 1_048_576 });
  });

  it('HQQ 2-bit, axis 1, group 64: four codes per byte', () => {
    const result = estimate({ backend: 'hqq', nbits: 2, axisKey: 1, axisValue: 1 });
    // 3,712 rows of 64 codes, 4 planes per byte → 928 · 64 = 59,392 B per store; scale + zero 29,696 B per store
    expect(result.rows[0]!.perLayer).toMatchObject({ codeBytes: 118_784, metadataBytes: 59_392, fullPrecisionBytes: 196_608, totalBytes: 374_784 });
  });

  it('full-attention-only on the hybrid: the sliding layers count as DynamicSlidingWindowLayer keeps them, 127 of 1,024 tokens', () => {
    const result = estimate({ layerPolicy: 'full-attention-only' }, hybrid);
    const byKind = Object.fromEntries(result.rows.map((row) => [row.kind, row]));
    expect(byKind['full_attention']).toMatchObject({ plan: 'quantized', layers: [1, 3, 5, 7], window: null, perLayer: { totalBytes: 493_568 } });
    // kept: window 128 − 1 = 127 tokens · 4 heads · 128 values · 4 B; fed to the graph: all 1,024
    expect(byKind['sliding_attention']).toMatchObject({
      plan: 'dynamic', layers: [0, 2, 4, 6], window: 128,
      perLayer: { tokens: 127, fullPrecisionBytes: 260_096, totalBytes: 260_096, fedTokens: 1024, fedBytes: 2_097_152 },
    });
    expect(result.total.totalBytes).toBe(4 * 493_568 + 4 * 260_096);
    expect(result.fedBytes).toBe(4 * 493_568 + 4 * 2_097_152);
  });

  it('a dynamic cache of the hybrid keeps its sliding layers\' window too', () => {
    const result = estimate({}, hybrid, 'dynamic');
    expect(result.total.totalBytes).toBe(4 * 2_097_152 + 4 * 260_096);
  });

  it('a dynamic cache holds everything in full precision', () => {
    const result = estimate({}, synthetic, 'dynamic');
    expect(result).toMatchObject({ quantizedTokens: 0, residualTokens: 1024, flushes: 0 });
    expect(result.total.totalBytes).toBe(8 * 2_097_152);
  });

  it('reports the backend\'s refusal at this length instead of a number', () => {
    const result = estimate({ groupSize: 3 });
    expect(result.rows[0]!.perLayer).toBeNull();
    expect(result.rows[0]!.error).toMatch(/^Group size \(3\) must be a divisor of \(237568\)/);
  });

  it('keeps no KV cache for mamba layers', () => {
    const jamba = fakeModel({ kind: 'folder', path: '/fake/models/jamba-1.5-mini' })!.config;
    const result = estimateKvMemory({ config: jamba, kvDtype: 'float16', cacheMode: 'quantized', settings: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, layerPolicy: 'full-attention-only' }, promptTokens: 32, contextLength: 1024 });
    expect(result.rows.find((row) => row.kind === 'mamba')).toMatchObject({ plan: 'none', perLayer: null, error: null });
    expect(result.rows.find((row) => row.kind === 'full_attention')!.layers).toEqual([4, 12, 20, 28]);
  });

  it('agrees byte for byte with a real QuantizedLayer fed the same tokens', () => {
    for (const settings of [
      { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, residualLength: 16 },
      { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 4, axisKey: 1, axisValue: 0, groupSize: 32, residualLength: 8 },
    ]) {
      const layer = new QuantizedLayer(quantizerFor(settings.backend as 'quanto' | 'hqq'), settings);
      const tensor = (seq: number, seed: number) => kvTensor([1, 4, seq, 64], 'float32', Float32Array.from({ length: 4 * seq * 64 }, (_, i) => Math.sin(i * 0.37 + seed)));
      layer.update(tensor(12, 1), tensor(12, 2));
      for (let step = 1; step < 60; step++) layer.update(tensor(1, step), tensor(1, -step));
      const estimated = estimateKvMemory({ config: synthetic, kvDtype: 'float32', cacheMode: 'quantized', settings, promptTokens: 12, contextLength: 71 });
      const { workingBytes: _w, ...actual } = layer.memory();
      const { workingBytes: _e, ...predicted } = estimated.rows[0]!.perLayer!;
      expect(predicted).toEqual(actual);
      layer.dispose();
    }
  });
});
