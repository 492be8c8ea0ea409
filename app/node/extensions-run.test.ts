import { afterAll, describe, expect, it } from 'vitest';
import type { CacheExtensions } from '../cache/cache-extensions.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import type { GenerationResult } from '../engine/generation-result.js';
import { createRunRecord, type RunRecord } from '../record/run-record.js';
import { parseRunRecord } from '../record/parse-run-record.js';
import { serializeRunRecord } from '../record/run-record.js';
import { releaseCachedSessions } from './ort/session-cache.js';
import { runGeneration } from './run-generation.js';
import { storiesSettings } from './test-support/stories.js';

afterAll(async () => {
  await releaseCachedSessions();
});

const HEADER = { id: 'run-1', createdAt: new Date('2025-01-31T12:00:00Z'), kvscopeVersion: 'test' };

/**
 * The record without what no two runs share: times (also the graph rewrite's, which only the first run
 * on a cold rewrite cache pays), throughput, process memory, and the extensions as asked.
 */
function comparable(result: GenerationResult): unknown {
  const record: RunRecord = createRunRecord(result, HEADER);
  const { extensions: _asked, ...quantization } = record.settings.quantization;
  return {
    ...record,
    settings: { ...record.settings, quantization },
    timings: null,
    // A cache notice says what this machine's cache held before the run (an entry of an older build
    // rebuilt), not what the run computed: whichever of the two runs came first would carry it.
    diagnostics: record.diagnostics.filter((diagnostic) => diagnostic.code !== 'cache-entry-rebuilt'),
    steps: record.steps.map((step) => ({ ...step, timings: null, tokensPerSecond: null, memory: null })),
  };
}

const layerMapOf = (numLayers: number, nbits: number): CacheExtensions['layerMap'] =>
  Array.from({ length: numLayers }, (_, layer) => ({ layer, nbitsKey: nbits, nbitsValue: nbits }));

/** nbits-key = nbits-value = nbits, no sink, no rotation, no outliers, a layer map equal to the global bits, no full-precision layers. */
function neutral(settings: QuantizedCacheSettings, numLayers: number): QuantizedCacheSettings {
  const { nbits } = settings;
  return {
    ...settings,
    extensions: { nbitsKey: nbits, nbitsValue: nbits, sinkTokens: 0, layerMap: layerMapOf(numLayers, nbits), fullPrecisionFirstLayers: 0, fullPrecisionLastLayers: 0 },
  };
}

describe('kvscope extensions at their neutral settings give the plain path\'s run record, bit for bit', () => {
  it('stories260k (fp32 and fp16 KV), quanto 4-bit, flushes every 16 steps, with the reference lane', async () => {
    const quantization: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 16 };
    for (const onnxFile of ['onnx/model.onnx', 'onnx/model_fp16.onnx']) {
      const base = { cacheMode: 'quantized' as const, reference: true, maxNewTokens: 60, onnxFile };
      const plain = await runGeneration(storiesSettings({ ...base, quantization }), {});
      const extended = await runGeneration(storiesSettings({ ...base, quantization: neutral(quantization, 5) }), {});
      expect(plain.flushCounts).toEqual([3, 3, 3, 3, 3]);
      expect(comparable(extended)).toEqual(comparable(plain));
      expect(createRunRecord(extended, HEADER).extensions).toBeUndefined();
    }
  }, 120_000);

  it('the synthetic model (8 layers, head_dim 64), HQQ 2-bit on axis 1', async () => {
    const quantization: QuantizedCacheSettings = {
      ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 2, axisKey: 1, axisValue: 1, groupSize: 64, residualLength: 8,
    };
    const base = { model: 'synthetic', prompt: 'Once upon a time', cacheMode: 'quantized' as const, reference: true, maxNewTokens: 20 };
    const plain = await runGeneration(storiesSettings({ ...base, quantization }), {});
    const extended = await runGeneration(storiesSettings({ ...base, quantization: neutral(quantization, 8) }), {});
    expect(plain.flushCounts.every((n) => n === 2)).toBe(true);
    expect(comparable(extended)).toEqual(comparable(plain));
  }, 120_000);
});

describe('a run with active extensions', () => {
  it('stories260k: K8V4 on HQQ, 4 sink tokens, Hadamard keys, 1% outliers, last layer in full precision; the record names them and counts their bytes', async () => {
    const quantization: QuantizedCacheSettings = {
      ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 4, axisKey: 0, axisValue: 0, groupSize: 32, residualLength: 16,
      extensions: { nbitsKey: 8, nbitsValue: 4, sinkTokens: 4, rotation: 'hadamard', outlierQuantile: 0.99, fullPrecisionLastLayers: 1 },
    };
    const result = await runGeneration(storiesSettings({ cacheMode: 'quantized', reference: true, maxNewTokens: 40, onnxFile: 'onnx/model.onnx', quantization }), {});
    const record = parseRunRecord(serializeRunRecord(createRunRecord(result, HEADER)), 'run.json');
    expect(record.extensions!.map((item) => item.id)).toEqual(['kv-bits-apart', 'full-precision-layers', 'attention-sinks', 'rotation', 'outliers']);
    expect(record.settings.quantization.extensions).toEqual(quantization.extensions);
    // 40 tokens cached (BOS and 39 fed back); layer 4 is a full-precision (dynamic) layer: K and V, 4 heads × 8 dims, float32
    expect(record.kvBytes[4]).toMatchObject({ quantizedTokens: 0, fullPrecisionTokens: 40, fullPrecisionBytes: 40 * 2 * 4 * 8 * 4 });
    expect(record.flushCounts[4]).toBe(0);
    // layers 0-3: at R = 16 the last flush (decode step 32) covered 33 tokens: 4 sink + 29 dense; 7 residual tokens follow
    const layer = record.kvBytes[0]!;
    const dense = 29 * 4 * 8; // values per side
    const outliersPerSide = 9; // ⌊0.01 · 928⌋
    expect(layer.extensions).toEqual({
      sinkTokens: 4, sinkBytes: 2 * 4 * 4 * 8 * 4, outliers: 2 * outliersPerSide, outlierIndexBytes: 2 * 4 * outliersPerSide, outlierValueBytes: 2 * 4 * outliersPerSide,
    });
    expect(layer).toMatchObject({ tokens: 40, quantizedTokens: 29, fullPrecisionTokens: 11 });
    // codes: keys 8 bits, values 4 bits; metadata: HQQ axis 0, groups of 32 → 29 groups per side, scale + zero in float32, plus outlier indices
    expect(layer.codeBytes).toBe(dense + dense / 2);
    expect(layer.metadataBytes).toBe(2 * 29 * 2 * 4 + 2 * 4 * outliersPerSide);
    expect(layer.fullPrecisionBytes).toBe(11 * 2 * 4 * 8 * 4 + 2 * 4 * outliersPerSide);
    expect(record.kvBytesTotal.extensions!.sinkBytes).toBe(4 * layer.extensions!.sinkBytes);
    expect(result.preflightDiagnostics!.map((d) => d.code)).toContain('kvscope-extensions');
    expect(record.reference!.top1Agreement).toBeGreaterThan(0.5);
  }, 120_000);
});
