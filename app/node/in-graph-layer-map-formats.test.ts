import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import { activeExtensions } from '../cache/active-extensions.js';
import { parseLayerMap } from '../cache/layer-map.js';
import type { RunSettings } from '../engine/types.js';
import { hasShared } from './golden.js';
import { leasedSessionCount, releaseCachedSessions } from './ort/session-cache.js';
import { runGeneration } from './run-generation.js';
import { runPath } from './test-support/path-run.js';
import { storiesSettings } from './test-support/stories.js';

/**
 * A KVTuner-style layer map that mixes transformers' quanto 4-bit layers with llama.cpp q8_0 layers
 * (format_key/format_value, a kvscope extension) on the synthetic model (8 layers, head_dim 64): the
 * graph path (quanto stores and q8_0 bytes dequantized in ONNX, layer by layer) gives the host path's
 * logits bit for bit, with the quanto layers flushing on transformers' schedule and the q8_0 layers
 * never; the record names the map's formats and the path that ran.
 */
afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
});

const MAP = [
  '0: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q8_0}',
  '1: {nbits_key: 4, nbits_value: 4}',
  '2: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q8_0}',
  '3: {nbits_key: 4, nbits_value: 4}',
  '4: {nbits_key: 4, nbits_value: 4}',
  '5: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q8_0}',
  '6: {nbits_key: 4, nbits_value: 4}',
  '7: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q8_0}',
].join('\n');
const quantization: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, residualLength: 8, extensions: { layerMap: parseLayerMap(MAP, 'mixed.yaml') } };
const FORMAT_LAYERS = [0, 2, 5, 7];

describe.skipIf(!hasShared())('a layer map mixing quanto 4-bit and llama.cpp:q8_0 layers', () => {
  it('synthetic (head_dim 64), 20 greedy steps: graph = host bit for bit, quanto layers flushing, q8_0 layers written once', async () => {
    const settings: RunSettings = { ...storiesSettings(), model: 'synthetic', cacheMode: 'quantized', quantization, prompt: 'Once upon a time', maxNewTokens: 20 };
    const graph = await runPath(settings, 'graph');
    const host = await runPath(settings, 'host');
    expect(graph.logits.length).toBe(host.logits.length);
    const differing = graph.logits.flatMap((bits, step) => (Buffer.compare(bits, host.logits[step]!) === 0 ? [] : [step]));
    expect(differing, 'steps whose logits differ in any bit').toEqual([]);
    expect(graph.ids).toEqual(host.ids);
    expect(graph.flushCounts).toEqual(host.flushCounts);
    expect(FORMAT_LAYERS.map((layer) => graph.flushCounts[layer])).toEqual([0, 0, 0, 0]);
    expect([1, 3, 4, 6].every((layer) => (graph.flushCounts[layer] ?? 0) > 0)).toBe(true);
    expect(graph.kvTotal).toBe(host.kvTotal);
  }, 240_000);

  it('runGeneration: the record says graph, names the map\'s formats, and stores the same bytes as host', async () => {
    const base: RunSettings = { ...storiesSettings(), model: 'synthetic', cacheMode: 'quantized', quantization, prompt: 'Once upon a time', maxNewTokens: 12, reference: true };
    const graph = await runGeneration(base);
    const host = await runGeneration({ ...base, dequantize: 'host' });
    expect(graph.dequantize).toBe('graph');
    expect(graph.generatedTokenIds).toEqual(host.generatedTokenIds);
    expect(graph.reference).toEqual(host.reference);
    const { workingBytes: _graphWorking, ...graphStored } = graph.kvBytesTotal;
    const { workingBytes: _hostWorking, ...hostStored } = host.kvBytesTotal;
    expect(graphStored).toEqual(hostStored);
    // what the run record and History name (app/record: activeExtensions over the run's settings)
    const extensions = activeExtensions(graph.settings.quantization, 8).map((extension) => `${extension.label}: ${extension.detail}`).join('\n');
    expect(extensions).toContain('0: K llama.cpp:q8_0 V llama.cpp:q8_0');
    expect(extensions).toContain('runtime KV format (write-once): llama.cpp:q8_0 in the layer map\'s layers');
  }, 240_000);
});
