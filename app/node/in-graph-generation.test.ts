import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import type { GenerationResult } from '../engine/generation-result.js';
import type { RunSettings } from '../engine/types.js';
import { hasShared } from './golden.js';
import { leasedSessionCount, releaseCachedSessions } from './ort/session-cache.js';
import { runGeneration } from './run-generation.js';
import { runPath, type PathRun } from './test-support/path-run.js';
import { storiesSettings } from './test-support/stories.js';

afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
});

function expectSameLogits(graph: PathRun, host: PathRun): void {
  expect(graph.logits.length).toBe(host.logits.length);
  const differing = graph.logits.flatMap((bits, step) => (Buffer.compare(bits, host.logits[step]!) === 0 ? [] : [step]));
  expect(differing, 'steps whose logits differ in any bit').toEqual([]);
  expect(graph.ids).toEqual(host.ids);
  expect(graph.flushCounts).toEqual(host.flushCounts);
  expect(graph.kvTotal).toBe(host.kvTotal);
}

/** Prompts of 8 tokens (BOS included): every setting below divides its prefill and flush lengths (the preflight's rules). */
const STORIES_CASES: readonly { name: string; onnxFile: string; quantization: QuantizedCacheSettings; prompt: string }[] = [
  { name: 'quanto 4-bit axis 0/0, g32, R16', onnxFile: 'onnx/model.onnx', prompt: 'Once upon a time', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 16 } },
  { name: 'quanto 2-bit axis −1/0, g32, R8, fp16 KV', onnxFile: 'onnx/model_fp16.onnx', prompt: 'The sun was hot and', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, nbits: 2, axisKey: -1, groupSize: 32, residualLength: 8 } },
  { name: 'hqq 4-bit axis 1/1, g32, R16', onnxFile: 'onnx/model.onnx', prompt: 'The sun was hot and', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', axisKey: 1, axisValue: 1, groupSize: 32, residualLength: 16 } },
  { name: 'hqq 3-bit axis 0/0 (int32 words), g32, R16', onnxFile: 'onnx/model.onnx', prompt: 'The sun was hot and', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 3, groupSize: 32, residualLength: 16 } },
  { name: 'hqq 3-bit axis 0/0 (int32 words), g32, R8, fp16 KV', onnxFile: 'onnx/model_fp16.onnx', prompt: 'Once upon a time', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 3, groupSize: 32, residualLength: 8 } },
  { name: 'hqq 8-bit axis 0/1, g64, R0 (a flush every other step), fp16 KV', onnxFile: 'onnx/model_fp16.onnx', prompt: 'The sun was hot and', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 8, axisValue: 1, groupSize: 64, residualLength: 0 } },
];

describe.skipIf(!hasShared())('--dequantize graph gives the host path\'s logits bit for bit, step after step', () => {
  for (const c of STORIES_CASES) {
    it(`stories260k ${c.onnxFile}, ${c.name}: 80 greedy steps`, async () => {
      const settings = storiesSettings({ onnxFile: c.onnxFile, cacheMode: 'quantized', quantization: c.quantization, prompt: c.prompt, maxNewTokens: 80 });
      const graph = await runPath(settings, 'graph');
      const host = await runPath(settings, 'host');
      expectSameLogits(graph, host);
      expect(graph.flushCounts.every((n) => n !== null && n > 0)).toBe(true);
      // Only the store and the residual cross into the graph: less than the host's dequantized history
      // (8-bit codes against fp16 values: about half plus the group parameters).
      expect(graph.materialized.at(-1)!).toBeLessThan(host.materialized.at(-1)! * (c.quantization.nbits <= 4 ? 0.5 : 0.75));
    }, 60_000);
  }

  it('the synthetic model, transformers\' defaults (quanto 4-bit, g64, R128): 150 steps across a flush', async () => {
    const settings: RunSettings = { ...storiesSettings(), model: 'synthetic', cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, prompt: 'Once upon a time', maxNewTokens: 150 };
    const graph = await runPath(settings, 'graph');
    const host = await runPath(settings, 'host');
    expectSameLogits(graph, host);
    expect(graph.flushCounts).toEqual(Array(8).fill(1));
  }, 120_000);

  it('synthetic-8b-kv (Llama-3-8B\'s KV geometry: 32 layers, 8 KV heads of 128), quanto 4-bit, R32: 40 steps across a flush', async () => {
    const settings: RunSettings = {
      ...storiesSettings(), model: 'synthetic-8b-kv', cacheMode: 'quantized', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, residualLength: 32 },
      prompt: 'Once upon a time', maxNewTokens: 40,
    };
    const graph = await runPath(settings, 'graph');
    const host = await runPath(settings, 'host');
    expectSameLogits(graph, host);
    expect(graph.flushCounts).toEqual(Array(32).fill(1));
  }, 180_000);
});

describe.skipIf(!hasShared())('runGeneration on both paths: the record says which ran; the same tokens, flushes and reference', () => {
  it('stories260k with the reference replay on: identical ids, KL and agreement; `dequantize` recorded', async () => {
    const base = storiesSettings({ cacheMode: 'quantized', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 16 }, prompt: 'Once upon a time', maxNewTokens: 60, reference: true });
    const graph: GenerationResult = await runGeneration({ ...base, dequantize: 'graph' });
    const host: GenerationResult = await runGeneration({ ...base, dequantize: 'host' });
    expect(graph.dequantize).toBe('graph');
    expect(host.dequantize).toBe('host');
    expect(graph.generatedTokenIds).toEqual(host.generatedTokenIds);
    expect(graph.reference).toEqual(host.reference);
    expect(graph.steps.map((s) => s.reference)).toEqual(host.steps.map((s) => s.reference));
    expect(graph.layerErrors).toEqual(host.layerErrors);
    expect(graph.diagnostics.some((d) => d.code === 'dequantize-path')).toBe(true);
  }, 60_000);

  it('a run that builds the rewrite says how long in its timings (rewriteMs), one that finds it cached does not; both runs\' notes are the same', async () => {
    const before = process.env['KVSCOPE_CACHE_DIR'];
    const cacheDir = await mkdtemp(join(tmpdir(), 'kvscope-rewrite-time-'));
    process.env['KVSCOPE_CACHE_DIR'] = cacheDir;
    try {
      const settings = storiesSettings({ cacheMode: 'quantized', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 16 }, prompt: 'Once upon a time', maxNewTokens: 4, dequantize: 'graph' });
      const cold = await runGeneration(settings);
      const warm = await runGeneration(settings);
      expect(cold.timings.rewriteMs).toBeGreaterThan(0);
      expect(cold.timings.rewriteMs!).toBeLessThanOrEqual(cold.timings.loadMs);
      expect(warm.timings).not.toHaveProperty('rewriteMs');
      expect(warm.diagnostics).toEqual(cold.diagnostics);
      expect(cold.diagnostics.find((d) => d.code === 'dequantize-path')?.message).toBe('Dequantized inside the graph, one layer at a time.');
    } finally {
      if (before === undefined) delete process.env['KVSCOPE_CACHE_DIR'];
      else process.env['KVSCOPE_CACHE_DIR'] = before;
      await rm(cacheDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('synthetic-hybrid under full-attention-only: sliding layers stay dynamic (fed as today), the rest in the graph', async () => {
    const base: RunSettings = {
      ...storiesSettings(), model: 'synthetic-hybrid', cacheMode: 'quantized', prompt: 'Once upon a time', maxNewTokens: 40,
      quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, residualLength: 16, layerPolicy: 'full-attention-only' },
    };
    const graph = await runGeneration({ ...base, dequantize: 'graph' });
    const host = await runGeneration({ ...base, dequantize: 'host' });
    expect(graph.dequantize).toBe('graph');
    expect(graph.generatedTokenIds).toEqual(host.generatedTokenIds);
    expect(graph.flushCounts).toEqual(host.flushCounts);
    expect(graph.flushCounts.filter((_, i) => i % 2 === 0)).toEqual([0, 0, 0, 0]);
    expect(graph.kvBytesTotal.totalBytes).toBe(host.kvBytesTotal.totalBytes);
  }, 120_000);

  it('the default runs the graph path; settings it cannot express fall back to host and say why; an explicit graph refuses', async () => {
    const sinks: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 16, extensions: { sinkTokens: 4 } };
    const fallback = await runGeneration(storiesSettings({ cacheMode: 'quantized', quantization: sinks, prompt: 'Once upon a time', maxNewTokens: 4 }));
    expect(fallback.dequantize).toBe('host');
    expect(fallback.diagnostics.find((d) => d.code === 'dequantize-path')?.message).toMatch(/on the host.*attention sinks/);
    await expect(runGeneration(storiesSettings({ cacheMode: 'quantized', quantization: sinks, prompt: 'Once', maxNewTokens: 4, dequantize: 'graph' })))
      .rejects.toThrow(/--dequantize graph cannot run these settings: the in-graph path does not express the kvscope extension\(s\) attention sinks/);
    const byDefault = await runGeneration(storiesSettings({ cacheMode: 'quantized', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32 }, prompt: 'Once upon a time', maxNewTokens: 4 }));
    expect(byDefault.dequantize).toBe('graph');
    const dynamic = await runGeneration(storiesSettings({ maxNewTokens: 4 }));
    expect(dynamic.dequantize).toBeUndefined();
  }, 60_000);
});
