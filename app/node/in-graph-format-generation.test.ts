import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import type { RunSettings } from '../engine/types.js';
import { hasShared } from './golden.js';
import { leasedSessionCount, releaseCachedSessions } from './ort/session-cache.js';
import { runGeneration } from './run-generation.js';
import { runPath, type PathRun } from './test-support/path-run.js';
import { storiesSettings } from './test-support/stories.js';

/**
 * Issue 27, point 3: a runtime's write-once format on the graph path (the runtime's bytes cross into
 * ONNX and are dequantized there) gives the host path's logits bit for bit, step after step, on the
 * synthetic models' realistic head geometry (head_dim 64 and 128); formats the graph cannot decode
 * run on the host and say why, and an explicit `--dequantize graph` refuses them before the run.
 */
afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
});

function formats(key: string, value: string = key, calculateKvScales = false): QuantizedCacheSettings {
  return { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { kvFormatKey: key, kvFormatValue: value, ...(calculateKvScales ? { calculateKvScales } : {}) } };
}

function expectSameLogits(graph: PathRun, host: PathRun): void {
  expect(graph.logits.length).toBe(host.logits.length);
  const differing = graph.logits.flatMap((bits, step) => (Buffer.compare(bits, host.logits[step]!) === 0 ? [] : [step]));
  expect(differing, 'steps whose logits differ in any bit').toEqual([]);
  expect(graph.ids).toEqual(host.ids);
  expect(graph.flushCounts).toEqual(host.flushCounts);
  expect(graph.kvTotal).toBe(host.kvTotal);
}

const CASES: readonly { name: string; model: string; quantization: QuantizedCacheSettings; steps: number }[] = [
  { name: 'llama.cpp:q4_0 (K and V)', model: 'synthetic', quantization: formats('llama.cpp:q4_0'), steps: 24 },
  { name: 'K llama.cpp:q8_0, V llama.cpp:q5_1', model: 'synthetic', quantization: formats('llama.cpp:q8_0', 'llama.cpp:q5_1'), steps: 24 },
  { name: 'K llama.cpp:iq4_nl, V llama.cpp:q4_1', model: 'synthetic', quantization: formats('llama.cpp:iq4_nl', 'llama.cpp:q4_1'), steps: 24 },
  { name: 'K llama.cpp:q5_0, V vllm:fp8_e5m2', model: 'synthetic', quantization: formats('llama.cpp:q5_0', 'vllm:fp8_e5m2'), steps: 24 },
  { name: 'vllm:fp8_e4m3 with --calculate-kv-scales', model: 'synthetic', quantization: formats('vllm:fp8_e4m3', 'vllm:fp8_e4m3', true), steps: 24 },
  { name: 'nvfp4', model: 'synthetic', quantization: formats('nvfp4'), steps: 24 },
  { name: 'llama.cpp:q4_0 (K and V)', model: 'synthetic-8b-kv', quantization: formats('llama.cpp:q4_0'), steps: 8 },
  { name: 'K vllm:fp8_e4m3, V nvfp4', model: 'synthetic-8b-kv', quantization: formats('vllm:fp8_e4m3', 'nvfp4', true), steps: 8 },
];

describe.skipIf(!hasShared())('runtime formats: --dequantize graph gives the host path\'s logits bit for bit', () => {
  for (const c of CASES) {
    it(`${c.model} (head_dim ${c.model === 'synthetic' ? 64 : 128}), ${c.name}: ${c.steps} greedy steps`, async () => {
      const settings: RunSettings = { ...storiesSettings(), model: c.model, cacheMode: 'quantized', quantization: c.quantization, prompt: 'Once upon a time', maxNewTokens: c.steps };
      const graph = await runPath(settings, 'graph');
      const host = await runPath(settings, 'host');
      expectSameLogits(graph, host);
      // only the runtime's bytes cross into the graph: less than the host's dequantized history
      expect(graph.materialized.at(-1)!).toBeLessThan(host.materialized.at(-1)!);
    }, 240_000);
  }
});

describe.skipIf(!hasShared())('runtime formats on runGeneration: the record names the path; host-only formats say why', () => {
  it('synthetic, K q8_0 / V nvfp4 with the reference replay: graph and host give the same tokens, memory and reference metrics', async () => {
    const base: RunSettings = { ...storiesSettings(), model: 'synthetic', cacheMode: 'quantized', quantization: formats('llama.cpp:q8_0', 'nvfp4'), prompt: 'Once upon a time', maxNewTokens: 16, reference: true };
    const graph = await runGeneration({ ...base, dequantize: 'graph' });
    const host = await runGeneration({ ...base, dequantize: 'host' });
    expect(graph.dequantize).toBe('graph');
    expect(host.dequantize).toBe('host');
    expect(graph.generatedTokenIds).toEqual(host.generatedTokenIds);
    expect(graph.reference).toEqual(host.reference);
    expect(graph.steps.map((s) => s.reference)).toEqual(host.steps.map((s) => s.reference));
    // the stored bytes as the runtime counts them are the same; the graph path keeps no dequantized view in JavaScript
    const { workingBytes: graphWorking, ...graphStored } = graph.kvBytesTotal;
    const { workingBytes: hostWorking, ...hostStored } = host.kvBytesTotal;
    expect(graphStored).toEqual(hostStored);
    expect(graphWorking).toBeLessThan(hostWorking / 2);
  }, 240_000);

  it('llama.cpp:q4_0+rot and mlx run on the host by default and say why; an explicit graph refuses', async () => {
    const rot: RunSettings = { ...storiesSettings(), model: 'synthetic', cacheMode: 'quantized', quantization: formats('llama.cpp:q4_0+rot', 'mlx:4bit-g64'), prompt: 'Once upon a time', maxNewTokens: 3 };
    const fallback = await runGeneration(rot);
    expect(fallback.dequantize).toBe('host');
    expect(fallback.diagnostics.find((d) => d.code === 'dequantize-path')?.message).toMatch(/on the host.*Hadamard rotation.*MLX/);
    await expect(runGeneration({ ...rot, dequantize: 'graph' })).rejects.toThrow(/--dequantize graph cannot run these settings: llama\.cpp:q4_0\+rot/);
  }, 120_000);
});
