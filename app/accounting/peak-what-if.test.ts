import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import { GRAPH_DECODE_ARENA_LAYERS, residualBufferRows } from '../cache/kv-peak.js';
import { fakeModel } from '../../renderer/test-support/fake-models.js';
import { estimateKvPeaks } from './peak-what-if.js';

const synthetic = fakeModel({ kind: 'synthetic' })!.config; // 8 layers, 4 KV heads × head_dim 64, float32
const hybrid = fakeModel({ kind: 'synthetic-hybrid' })!.config;

/*
 * The same 32 + 992 = 1024 tokens as memory-what-if.test.ts: F = 8 layers · 1024 tokens · 4 heads ·
 * (64 + 64) · 4 B = 16 MiB of float32 K+V; the quantized stores hold 8 · (237,568 + 59,392) B.
 */
const F = 8 * 1024 * 4 * 128 * 4;
const STORES = 8 * (237_568 + 59_392);

describe('the what-if\'s peaks (app/cache/kv-peak.ts)', () => {
  const peaks = estimateKvPeaks({ config: synthetic, kvDtype: 'float32', settings: DEFAULT_QUANTIZED_CACHE_SETTINGS, promptTokens: 32, contextLength: 1024 });

  it('dynamic: the past, ONNX Runtime\'s present and the present copied out: 3·F', () => {
    expect(peaks.dynamic.bytes).toBe(3 * F);
    expect(peaks.dynamic.parts.map((part) => part.bytes)).toEqual([F, F, F]);
  });

  it('host: the dynamic path\'s three, the spare dequant(store) buffers and the stores', () => {
    expect(peaks.host.bytes).toBe(4 * F + STORES);
  });

  it('graph: the stores, the residual buffers, the flush scratch\'s one layer and the arena\'s 1.5 layers inside ONNX Runtime', () => {
    const layer = F / 8;
    // residual buffers: 128 rows (127 at most, doubling from 1) of K and V, 4 heads × 64 float32, 8 layers
    const residual = 8 * 2 * 4 * 64 * 4 * residualBufferRows(128);
    expect(residualBufferRows(128)).toBe(128);
    expect(GRAPH_DECODE_ARENA_LAYERS).toBe(1.5);
    expect(peaks.graph.parts.map((part) => part.bytes)).toEqual([STORES, residual, layer, 1.5 * layer]);
    // well below the dynamic cache's at this context (the 128-row residual buffers are a third of it here), and the host path's
    expect(peaks.dynamic.bytes / peaks.graph.bytes).toBeGreaterThan(4);
    expect(peaks.graph.bytes).toBeLessThan(peaks.host.bytes / 6);
  });

  it('dynamic layers of a layer policy add their own three copies to the graph path', () => {
    const mixed = estimateKvPeaks({ config: hybrid, kvDtype: 'float32', settings: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, layerPolicy: 'full-attention-only' }, promptTokens: 32, contextLength: 1024 });
    const dynamicPart = mixed.graph.parts.find((part) => part.label.startsWith('dynamic layers'))!;
    expect(dynamicPart.bytes).toBe(3 * 4 * 1024 * 4 * 128 * 4);
  });

  it('float16 KV: F in binary16, while the graph path dequantizes in float32', () => {
    const half = estimateKvPeaks({ config: synthetic, kvDtype: 'float16', settings: DEFAULT_QUANTIZED_CACHE_SETTINGS, promptTokens: 32, contextLength: 1024 });
    expect(half.dynamic.bytes).toBe(3 * F / 2);
    expect(half.graph.parts[3]!.bytes).toBe(1.5 * F / 8);
  });

  it('the residual buffers grow from one row after the prefill (quantized whole) and stop at the power of two above residual_length − 1', () => {
    expect([0, 1, 2, 3, 16, 17, 100, 127, 128, 5000].map((tokens) => residualBufferRows(128, tokens))).toEqual([1, 1, 2, 4, 16, 32, 128, 128, 128, 128]);
    expect(residualBufferRows(5)).toBe(4);
    // 32 prompt tokens, then 16 decoded: 16 rows of K and V in each of the 8 layers
    const early = estimateKvPeaks({ config: synthetic, kvDtype: 'float32', settings: DEFAULT_QUANTIZED_CACHE_SETTINGS, promptTokens: 32, contextLength: 48 });
    expect(early.graph.parts[1]!.bytes).toBe(8 * 2 * 4 * 64 * 4 * 16);
  });
});
