import { writeFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushSchedule } from '../cache/flush-schedule.js';
import type { GenerationResult } from '../engine/generation-result.js';
import { leasedSessionCount, releaseCachedSessions } from './ort/session-cache.js';
import { resolveModelPath, runGeneration } from './run-generation.js';
import { copyOfStories, HQQ8, LLAMA2C_EXPECTED_200, README_FIRST_16, storiesDir, storiesSettings } from './test-support/stories.js';

afterAll(async () => {
  // Every run handed its session back; the warm one left is released here.
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
});

describe('runGeneration on stories260k (dynamic cache, greedy from BOS)', () => {
  const results = new Map<string, GenerationResult>();
  const streamed = new Map<string, string>();

  beforeAll(async () => {
    for (const onnxFile of ['onnx/model.onnx', 'onnx/model_fp16.onnx']) {
      let text = '';
      results.set(onnxFile, await runGeneration(storiesSettings({ onnxFile }), { onText: (delta) => { text += delta; } }));
      streamed.set(onnxFile, text);
    }
  });

  it.each(['onnx/model.onnx', 'onnx/model_fp16.onnx'])('%s reproduces the README: first 16 ids, 346 steps until id 1, llama2.c\'s text', (onnxFile) => {
    const result = results.get(onnxFile)!;
    expect(result.promptTokenIds).toEqual([1]);
    expect(result.generatedTokenIds.slice(0, 16)).toEqual(README_FIRST_16);
    expect(result.generatedTokenIds).toHaveLength(346);
    expect(result.generatedTokenIds.at(-1)).toBe(1);
    expect(result.stopReason).toBe('eos');
    expect(result.text.startsWith(LLAMA2C_EXPECTED_200)).toBe(true);
    // Streaming decode gives the same text as decoding everything at once.
    expect(streamed.get(onnxFile)).toBe(result.text);
  });

  it('fp32 and fp16-KV graphs produce the same ids', () => {
    expect(results.get('onnx/model_fp16.onnx')!.generatedTokenIds).toEqual(results.get('onnx/model.onnx')!.generatedTokenIds);
  });

  it('states what ran: provider, ORT version, model identity, timings, per-step metrics', () => {
    const result = results.get('onnx/model_fp16.onnx')!;
    expect(result.executionProvider).toBe('cpu');
    expect(result.ortVersion).toBe('1.30.0');
    expect(result.model).toMatchObject({ onnxFile: 'onnx/model_fp16.onnx', modelType: 'llama', numLayers: 5, kvDtype: 'float16' });
    expect(result.model.onnxSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(result.model.configSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(result.steps).toHaveLength(346);
    expect(result.steps.map((s) => s.tokenId)).toEqual(result.generatedTokenIds);
    expect(result.steps[0]!.seqLength).toBe(1);
    expect(result.steps[345]!.seqLength).toBe(346);
    expect(result.timings.decodeTokens).toBe(345);
    expect(result.timings.decodeTokensPerSecond).toBeGreaterThan(0);
    // A dynamic cache holds every token in full precision: K and V of 4 heads × 8 dims, fp16.
    const layer = result.kvBytes[0]!;
    expect(layer).toMatchObject({ tokens: 346, quantizedTokens: 0, fullPrecisionTokens: 346, codeBytes: 0 });
    expect(layer.fullPrecisionBytes).toBe(346 * 4 * 16 * 2);
    expect(layer.fp16BaselineBytes).toBe(layer.fullPrecisionBytes);
    expect(result.kvBytesTotal.totalBytes).toBe(5 * layer.totalBytes);
    expect(result.flushCounts).toEqual([0, 0, 0, 0, 0]);
    expect(result.layerErrors).toEqual([null, null, null, null, null]);
    // The materialized past of the last step is 345 tokens of every layer, fp16.
    expect(result.steps[345]!.materializedKvBytes).toBe(5 * 345 * 4 * 16 * 2);
    expect(result.steps[10]!.memory.rssBytes).toBeGreaterThan(0);
    expect(result.reference).toBeNull();
    expect(result.preflightDiagnostics).toBeUndefined();
    // 1 + 400 > 512? No: no context warning for this run.
    expect(result.diagnostics).toEqual([]);
  });
});

describe('runGeneration with a quantized cache', () => {
  let quantized: GenerationResult;
  beforeAll(async () => {
    quantized = await runGeneration(storiesSettings({ cacheMode: 'quantized', quantization: HQQ8, reference: true, maxNewTokens: 300 }), {});
  });

  it('8-bit HQQ agrees with the full-precision reference on ≥95% of top-1 tokens', () => {
    const reference = quantized.reference!;
    expect(reference.steps).toBe(quantized.steps.length);
    expect(reference.top1Agreement).toBeGreaterThanOrEqual(0.95);
    expect(reference.meanKl).toBeLessThan(0.01);
    expect(quantized.steps[0]!.reference).toMatchObject({ klDivergence: 0, top1Agrees: true });
  });

  it('flushes every max(R, 2) decode steps in every layer (spec §1.3)', () => {
    const decodeSteps = quantized.steps.length - 1;
    const expected = Math.floor(decodeSteps / Math.max(HQQ8.residualLength, 2));
    expect(quantized.flushCounts).toEqual([expected, expected, expected, expected, expected]);
    const flushSteps = quantized.steps.filter((s) => s.flushes.some((f) => f.kind === 'flush')).map((s) => s.step);
    expect(flushSteps).toEqual(flushSchedule(1, HQQ8.residualLength, decodeSteps, 1).flushSteps);
    expect(quantized.steps[0]!.flushes.map((f) => f.kind)).toEqual(['prefill', 'prefill', 'prefill', 'prefill', 'prefill']);
  });

  it('reports stored bytes by component against the baselines, and each layer\'s last error', () => {
    const last = quantized.kvBytes[2]!;
    expect(last.tokens).toBe(quantized.steps.at(-1)!.seqLength);
    expect(last.quantizedTokens + last.fullPrecisionTokens).toBe(last.tokens);
    expect(last.codeBytes).toBe(last.quantizedTokens * 4 * 16); // 8 bits per value
    expect(last.totalBytes).toBeLessThan(last.fp32BaselineBytes);
    expect(quantized.layerErrors[2]).toMatchObject({ layer: 2, kind: 'flush' });
    expect(quantized.layerErrors[2]!.key.relFroErr).toBeLessThan(0.01);
    expect(quantized.preflightDiagnostics!.every((d) => d.severity !== 'error')).toBe(true);
  });

  it('refuses settings the preflight refuses, with its message', async () => {
    const settings = storiesSettings({ cacheMode: 'quantized', quantization: { ...HQQ8, backend: 'quanto', nbits: 8 } });
    await expect(runGeneration(settings, {})).rejects.toMatchObject({
      name: 'PreflightRefusedError',
      message: expect.stringContaining('`nbits` for `quanto` backend has to be one of [`2`, `4`] but got 8'),
    });
  });
});

describe('runGeneration on the synthetic hybrid (sliding + full attention)', () => {
  const hybrid = (layerPolicy: 'all' | 'full-attention-only'): Promise<GenerationResult> => runGeneration(storiesSettings({
    model: 'synthetic-hybrid', prompt: 'Once upon a time', maxNewTokens: 12, cacheMode: 'quantized', reference: true,
    quantization: { ...HQQ8, groupSize: 64, residualLength: 4, layerPolicy },
  }), {});

  it('policy "all": refused as transformers V5 refuses it (spec §1.2)', async () => {
    await expect(hybrid('all')).rejects.toMatchObject({
      name: 'PreflightRefusedError',
      message: expect.stringContaining("`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: {'sliding_attention'}"),
    });
  }, 120_000);

  it('policy "full-attention-only": quantizes the full-attention layers and keeps sliding ones full precision', async () => {
    const result = await hybrid('full-attention-only');
    const flushes = Math.floor((result.steps.length - 1) / 4);
    expect(result.flushCounts).toEqual([0, flushes, 0, flushes, 0, flushes, 0, flushes]);
    expect(result.kvBytes.map((layer) => layer!.quantizedTokens > 0)).toEqual([false, true, false, true, false, true, false, true]);
    expect(result.reference!.steps).toBe(12);
  }, 120_000);
});

describe('runGeneration sampling and cancellation', () => {
  const sampled = (seed: number): Promise<GenerationResult> => runGeneration(storiesSettings({
    prompt: 'Once upon a time', maxNewTokens: 40, sampling: { greedy: false, temperature: 1, topK: 40, topP: 0.95, seed },
  }), {});

  it('the same seed gives the same tokens; another seed gives others', async () => {
    const [a, b, c] = [await sampled(7), await sampled(7), await sampled(8)];
    expect(a.promptTokenIds).toEqual([1, 403, 407, 261, 378]);
    expect(b.generatedTokenIds).toEqual(a.generatedTokenIds);
    expect(c.generatedTokenIds).not.toEqual(a.generatedTokenIds);
  });

  it('cancelling stops within one step', async () => {
    let steps = 0;
    let cancelled = false;
    const result = await runGeneration(storiesSettings(), {
      onStep: (metrics) => {
        steps++;
        if (metrics.step === 20) cancelled = true;
      },
      isCancelled: () => cancelled,
    });
    expect(result.stopReason).toBe('cancelled');
    expect(result.generatedTokenIds).toHaveLength(21);
    expect(steps).toBe(21);
  });
});

describe('runGeneration refuses bad inputs with a message that says what to do', () => {
  const copy = copyOfStories();
  afterAll(() => copy.remove());

  it('a folder without config.json', async () => {
    rmSync(join(copy.dir, 'config.json'), { force: true });
    try {
      await expect(runGeneration(storiesSettings({ model: copy.dir }), {})).rejects.toMatchObject({
        name: 'ModelLoadError',
        message: expect.stringMatching(/has neither config\.json nor genai_config\.json/),
        fix: expect.stringMatching(/Put the config\.json/),
      });
    } finally {
      writeFileSync(join(copy.dir, 'config.json'), readFileSync(join(storiesDir(), 'config.json')));
    }
  });

  it('a corrupt .onnx', async () => {
    const garbage = new Uint8Array(4096).map((_, i) => (i * 7919) % 251);
    writeFileSync(join(copy.dir, 'onnx', 'model_garbage.onnx'), garbage);
    const error = await runGeneration(storiesSettings({ model: copy.dir, onnxFile: 'onnx/model_garbage.onnx' }), {}).catch((e: unknown) => e);
    // found in the protobuf header, before onnxruntime is asked to load anything
    expect(error).toMatchObject({ name: 'ModelLoadError', fix: expect.stringMatching(/Download the \.onnx file again/) });
    expect((error as Error).message).toMatch(/^onnx\/model_garbage\.onnx is not an ONNX model: byte 1 holds a field numbered 0/);
    expect((error as Error).message).not.toMatch(/\n\s+at /);
  });

  it('a config that contradicts the graph', async () => {
    const configPath = join(copy.dir, 'config.json');
    const original = readFileSync(configPath, 'utf8');
    writeFileSync(configPath, original.replace('"num_key_value_heads": 4', '"num_key_value_heads": 2'));
    try {
      await expect(runGeneration(storiesSettings({ model: copy.dir }), {})).rejects.toMatchObject({
        name: 'ModelRefusedError',
        message: expect.stringContaining('says num_key_value_heads = 2, but onnx/model.onnx\'s past_key_values.0.key is [batch_size, 4, past_sequence_length, 8]'),
        diagnostics: [expect.objectContaining({ code: 'io-kv-heads', layers: [0, 1, 2, 3, 4] })],
      });
    } finally {
      writeFileSync(configPath, original);
    }
  });

  it('a missing tokenizer', async () => {
    rmSync(join(copy.dir, 'tokenizer.json'));
    try {
      await expect(runGeneration(storiesSettings({ model: copy.dir }), {})).rejects.toMatchObject({
        name: 'TokenizerError', message: expect.stringMatching(/has no tokenizer\.json/),
      });
    } finally {
      writeFileSync(join(copy.dir, 'tokenizer.json'), readFileSync(join(storiesDir(), 'tokenizer.json')));
    }
  });

  it.each(['cuda', 'dml'] as const)('an execution provider that is not available here (%s)', async (executionProvider) => {
    await expect(runGeneration(storiesSettings({ executionProvider }), {})).rejects.toMatchObject({
      name: 'ExecutionProviderRefusedError',
      message: expect.stringMatching(/Available here: cpu/),
    });
  });

  it('resolves a synthetic kind to the folder its builder wrote', async () => {
    const resolved = await resolveModelPath('synthetic').catch((e: unknown) => e);
    if (typeof resolved === 'string') expect(resolved.length).toBeGreaterThan(0);
    else expect(resolved).toMatchObject({ name: 'ModelLoadError', message: expect.stringMatching(/synthetic model builder is not available/) });
  });
});
