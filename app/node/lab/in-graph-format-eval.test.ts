import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../../cache/cache-config.js';
import { defaultWindowSettings } from '../../lab/eval-settings.js';
import { hasShared } from '../golden.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { runEval } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';

/**
 * Issue 27, "graph = host bit for bit for every format the graph path takes", for the eval: every
 * runtime format the rewrite decodes (llama.cpp's six ggml types, vLLM's two FP8s, NVFP4) evaluated
 * on the graph path and on the host path gives every eval figure bit for bit (per-token scores,
 * summary, layer errors, stored bytes). The synthetic models give the realistic head geometries at
 * the least cost: `synthetic` has head_dim 64 (8 layers, 4 KV heads), `synthetic-8b-kv` head_dim 128
 * (32 layers, 8 KV heads). Formats are paired K/V apart, so each format is a key on one model and a
 * value on the other; one pair measures FP8 with scales computed from the prompt.
 */
const references = tempReferenceStore();

afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
  references.remove();
});

function formats(key: string, value: string, calculateKvScales = false): QuantizedCacheSettings {
  return { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { kvFormatKey: key, kvFormatValue: value, ...(calculateKvScales ? { calculateKvScales } : {}) } };
}

const PAIRS: readonly (readonly [key: string, value: string, calculateKvScales?: boolean])[] = [
  ['llama.cpp:q8_0', 'llama.cpp:q4_0'],
  ['llama.cpp:q4_1', 'llama.cpp:q5_0'],
  ['llama.cpp:q5_1', 'llama.cpp:iq4_nl'],
  ['vllm:fp8_e4m3', 'vllm:fp8_e5m2'],
  ['nvfp4', 'vllm:fp8_e4m3', true],
];

const MODELS = [
  { model: 'synthetic', headDim: 64, pairs: PAIRS },
  // K and V swapped: each format is a key at head_dim 64 and a value at 128 (or the reverse)
  { model: 'synthetic-8b-kv', headDim: 128, pairs: PAIRS.map(([key, value, scales]) => [value, key, scales] as const) },
];

describe.skipIf(!hasShared())('kvscope eval with runtime formats: the graph path scores what the host path scores, bit for bit', () => {
  for (const { model, headDim, pairs } of MODELS) {
    for (const [key, value, scales] of pairs) {
      it(`${model} (head_dim ${headDim}): K ${key}, V ${value}${scales === true ? ', --calculate-kv-scales' : ''}`, async () => {
        const settings = storiesEvalSettings({ model, cacheMode: 'quantized', quantization: formats(key, value, scales), windows: { ...defaultWindowSettings(32), maxWindows: 1 } });
        const graph = await runEval({ ...settings, dequantize: 'graph' }, { referenceStore: references.store, perToken: true });
        const host = await runEval({ ...settings, dequantize: 'host' }, { referenceStore: references.store, perToken: true });
        expect(graph.dequantize).toBe('graph');
        expect(host.dequantize).toBe('host');
        expect(graph.perToken).toEqual(host.perToken);
        expect(graph.summary).toEqual(host.summary);
        expect(graph.feed).toBe(host.feed);
        // the format changed what attention saw (else the comparison would say nothing)
        expect(graph.summary.kld.mean).toBeGreaterThan(0);
        expect(graph.layerErrors).toEqual(host.layerErrors);
        expect(graph.flushCounts).toEqual(host.flushCounts);
        const stored = (layer: (typeof graph.memory.perLayer)[number]): unknown => (layer === null ? null : [layer.codeBytes, layer.metadataBytes, layer.fullPrecisionBytes]);
        expect(graph.memory.perLayer.map(stored)).toEqual(host.memory.perLayer.map(stored));
        expect(graph.memory.storedBytes).toBe(host.memory.storedBytes);
        expect(graph.memory.bitsPerValue).toBe(host.memory.bitsPerValue);
        expect(graph.perWindow).toEqual(host.perWindow);
        expect(graph.extensions).toEqual(host.extensions);
        expect(graph.reference.key).toBe(host.reference.key);
      }, 120_000);
    }
  }
});
