import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import type { DecoderSession, SessionFeeds, SessionOutputs } from '../engine/decoder-session.js';
import { generate } from '../engine/generate.js';
import type { GenerationResult } from '../engine/generation-result.js';
import { planRunCache } from '../engine/plan-run-cache.js';
import type { RunSettings } from '../engine/types.js';
import { hasShared } from './golden.js';
import { encodePrompt } from './model/load-tokenizer.js';
import { openInGraphModel } from './model/open-in-graph-model.js';
import { openModelSession, readModelFiles, type OpenedModel } from './model/open-model.js';
import { leasedSessionCount, releaseCachedSessions } from './ort/session-cache.js';
import { resolveModelPath, runGeneration } from './run-generation.js';
import { storiesSettings } from './test-support/stories.js';

afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
});

/** Copies every run's logits (a session's outputs may be freed once the step is done). */
class LogitsRecorder implements DecoderSession {
  readonly logits: Uint8Array[] = [];
  constructor(readonly inner: DecoderSession) {}
  get inputs(): DecoderSession['inputs'] { return this.inner.inputs; }
  get outputs(): DecoderSession['outputs'] { return this.inner.outputs; }
  get executionProvider(): DecoderSession['executionProvider'] { return this.inner.executionProvider; }
  async run(feeds: SessionFeeds): Promise<SessionOutputs> {
    const outputs = await this.inner.run(feeds);
    const data = outputs['logits']!.data;
    this.logits.push(new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice());
    return outputs;
  }
  release(outputs: Parameters<NonNullable<DecoderSession['release']>>[0]): void { this.inner.release?.(outputs); }
  dispose(): Promise<void> { return this.inner.dispose(); }
}

interface PathRun {
  readonly logits: Uint8Array[];
  readonly ids: readonly number[];
  readonly flushCounts: readonly (number | null)[];
  readonly kvTotal: number;
  readonly materialized: readonly number[];
}

/** One greedy run through the engine on one path, recording every step's logits bits. */
async function runPath(settings: RunSettings, path: 'graph' | 'host'): Promise<PathRun> {
  const files = readModelFiles(await resolveModelPath(settings.model), settings.onnxFile);
  const promptTokenIds = encodePrompt(files.tokenizer, settings.prompt, files.specialTokens.bosTokenId, settings.promptFormat);
  const cachePlan = planRunCache(files.config, settings, promptTokenIds.length);
  let model: OpenedModel;
  let inGraph;
  if (path === 'graph') {
    const opened = await openInGraphModel(files, settings, cachePlan.plan!);
    if ('reason' in opened) throw new Error(opened.reason);
    model = opened;
    inGraph = opened.inGraph;
  } else {
    model = await openModelSession(files, settings.executionProvider);
  }
  const recorder = new LogitsRecorder(model.session);
  try {
    const outcome = await generate({
      session: recorder, io: model.io, config: model.config, settings, promptTokenIds,
      eosTokenIds: model.specialTokens.eosTokenIds, decodeText: model.tokenizer.decode, now: () => performance.now(), cachePlan,
      ...(inGraph === undefined ? {} : { inGraph }),
    });
    return {
      logits: recorder.logits, ids: outcome.generatedTokenIds, flushCounts: outcome.flushCounts, kvTotal: outcome.kvBytesTotal.totalBytes,
      materialized: outcome.steps.map((step) => step.materializedKvBytes),
    };
  } finally {
    await model.dispose();
  }
}

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
    const hqq3: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 3, groupSize: 32, residualLength: 16 };
    const fallback = await runGeneration(storiesSettings({ cacheMode: 'quantized', quantization: hqq3, prompt: 'Once upon a time', maxNewTokens: 4 }));
    expect(fallback.dequantize).toBe('host');
    expect(fallback.diagnostics.find((d) => d.code === 'dequantize-path')?.message).toMatch(/on the host.*3-bit/);
    await expect(runGeneration(storiesSettings({ cacheMode: 'quantized', quantization: hqq3, prompt: 'Once', maxNewTokens: 4, dequantize: 'graph' })))
      .rejects.toThrow(/--dequantize graph cannot run these settings: keys: HQQ packs 3-bit codes/);
    const byDefault = await runGeneration(storiesSettings({ cacheMode: 'quantized', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32 }, prompt: 'Once upon a time', maxNewTokens: 4 }));
    expect(byDefault.dequantize).toBe('graph');
    const dynamic = await runGeneration(storiesSettings({ maxNewTokens: 4 }));
    expect(dynamic.dequantize).toBeUndefined();
  }, 60_000);
});
