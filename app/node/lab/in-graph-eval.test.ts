import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../../cache/cache-config.js';
import { hasShared } from '../golden.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { HQQ8 } from '../test-support/stories.js';
import { runEval } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';

const references = tempReferenceStore();

afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
  references.remove();
});

const QUANTO4_R32: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, residualLength: 32 };
const HQQ2_AXIS0: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 2, axisKey: 0, axisValue: 0, groupSize: 16, residualLength: 48 };

/**
 * `--dequantize graph|host` in the lab: the two paths feed attention the very same tensors (the graph
 * dequantizes op for op as the quantizers do), so every scored prediction is the same bit for bit.
 * Residual lengths that flush inside the scored rows make the chunked feed absorb a run's new rows in
 * two updates (n − 1, then 1) on the graph path too.
 */
describe.skipIf(!hasShared())('kvscope eval on stories260k: the graph path scores what the host path scores', () => {
  it.each([
    ['quanto 4-bit, residual 32 (chunked, fp32 KV)', QUANTO4_R32, undefined],
    ['HQQ 8-bit axis 1, residual 32 (chunked, fp32 KV)', HQQ8, undefined],
    ['HQQ 2-bit axis 0, residual 48 (chunked, fp32 KV)', HQQ2_AXIS0, undefined],
    ['quanto 4-bit, residual 32 (token by token, fp16 KV)', QUANTO4_R32, 'onnx/model_fp16.onnx'],
  ] as const)('%s: PPL, KLD, Δp and top-1 identical, and the record says which path ran', async (_name, quantization, onnxFile) => {
    const settings = storiesEvalSettings({ cacheMode: 'quantized', quantization, ...(onnxFile === undefined ? {} : { onnxFile }) }, onnxFile === undefined ? 2 : 1);
    const graph = await runEval({ ...settings, dequantize: 'graph' }, { referenceStore: references.store, perToken: true });
    const host = await runEval({ ...settings, dequantize: 'host' }, { referenceStore: references.store, perToken: true });
    expect(graph.dequantize).toBe('graph');
    expect(host.dequantize).toBe('host');
    expect(graph.feed).toBe(onnxFile === undefined ? 'chunked' : 'token-by-token');
    // The cache flushed inside the scored rows (else the quantized past would never change).
    expect(graph.flushCounts.some((count) => count !== null && count > 0)).toBe(true);
    expect(graph.flushCounts).toEqual(host.flushCounts);
    expect(graph.perToken).toEqual(host.perToken);
    expect(graph.summary).toEqual(host.summary);
    expect(graph.summary.kld.mean).toBeGreaterThan(0);
    expect(graph.layerErrors).toEqual(host.layerErrors);
    // What the cache stores is the same on both paths (the host path's working buffers are extra).
    const stored = (layer: (typeof graph.memory.perLayer)[number]): unknown => (layer === null ? null : [layer.codeBytes, layer.metadataBytes, layer.fullPrecisionBytes]);
    expect(graph.memory.perLayer.map(stored)).toEqual(host.memory.perLayer.map(stored));
    expect(graph.memory.storedBytes).toBe(host.memory.storedBytes);
    // The reference is the full-precision source graph's either way: one key, computed once.
    expect(graph.reference.key).toBe(host.reference.key);
    expect(host.reference.cached).toBe(true);
  });

  it('defaults to the graph path; the lab\'s targets run on the host with the reason, and an explicit graph is refused with it', async () => {
    const settings = storiesEvalSettings({ cacheMode: 'quantized', quantization: QUANTO4_R32 }, 1);
    const plain = await runEval(settings, { referenceStore: references.store });
    expect(plain.dequantize).toBe('graph');
    expect(plain.dequantizeReason).toBeUndefined();
    const targets = { layers: [1], parts: 'both' } as const;
    const targeted = await runEval({ ...settings, targets }, { referenceStore: references.store });
    expect(targeted.dequantize).toBe('host');
    expect(targeted.dequantizeReason).toMatch(/--quantize-layers\/--quantize-parts targets are not rewritten into the graph/);
    await expect(runEval({ ...settings, targets, dequantize: 'graph' }, { referenceStore: references.store }))
      .rejects.toThrow(/--dequantize graph cannot evaluate these settings: the lab's --quantize-layers/);
    const dynamic = await runEval(storiesEvalSettings({}, 1), { referenceStore: references.store });
    expect(dynamic.dequantize).toBeUndefined();
  });
});
