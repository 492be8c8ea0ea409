import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { GPT2_COMBINED_NAMING, OPTIMUM_NAMING } from '../../engine/io-naming.js';
import type { RunSettings } from '../../engine/types.js';
import { TINY_DEFAULTS, type TinyDecoderOptions } from '../../model-layout/test-support/tiny-decoder.js';
import { sharedDir } from '../golden.js';
import { releaseCachedSessions } from '../ort/session-cache.js';
import { runGeneration } from '../run-generation.js';
import { inspectModel } from './inspect-model.js';
import { handGreedy } from './test-support/layout-fixtures.js';

/**
 * The three real ONNX Runtime GenAI test exports (../shared/models/ort-genai-tiny, made by others'
 * exporters), opened as they are: no config.json, genai_config.json's names, the model builder's
 * root model.onnx + model.onnx.data, int32 inputs and combined past, LFM2's conv states.
 */
const TINY = join(sharedDir(), 'models', 'ort-genai-tiny');
const NEW_TOKENS = 12;
const QUANTIZED = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 8, residualLength: 4, layerPolicy: 'full-attention-only' as const };

interface Export {
  readonly folder: string;
  readonly graph: string;
  readonly prompt: number[];
  /** the graph's I/O, for the hand-written loop */
  readonly io: TinyDecoderOptions;
  readonly kvLayers: number[];
  readonly precision: string;
}

const EXPORTS: Export[] = [
  {
    folder: 'llama-fp16', graph: 'model.onnx', prompt: [1, 15043, 727], kvLayers: [0, 1], precision: 'fp16 weights · fp16 KV · fp16 logits',
    io: { ...TINY_DEFAULTS, layers: 2, kvHeads: 1, headDim: 16, kvType: 'float16', logitsType: 'float16', naming: OPTIMUM_NAMING },
  },
  {
    folder: 'gpt2-combined-past', graph: 'past.onnx', prompt: [98, 5, 17, 400], kvLayers: [0, 1, 2, 3, 4], precision: 'fp32 weights · fp32 KV · fp32 logits',
    io: { ...TINY_DEFAULTS, layers: 5, kvHeads: 4, headDim: 8, idsType: 'int32', naming: GPT2_COMBINED_NAMING },
  },
  {
    folder: 'lfm2-hybrid-stub', graph: 'decoder.onnx', prompt: [5, 6, 7], kvLayers: [1, 3], precision: 'fp32 weights · fp32 KV · fp32 logits',
    io: {
      ...TINY_DEFAULTS, layers: 4, kvHeads: 4, headDim: 8, convLayers: [0, 2], convWidth: 4,
      naming: { ...OPTIMUM_NAMING, states: [{ past: 'past_conv.%d', present: 'present_conv.%d', kind: 'conv' }] },
    },
  },
];

afterAll(releaseCachedSessions);

function settings(folder: string, prompt: number[], overrides: Partial<RunSettings> = {}): RunSettings {
  return {
    model: join(TINY, folder), executionProvider: 'cpu', cacheMode: 'dynamic', quantization: QUANTIZED, prompt: '', promptTokenIds: prompt,
    maxNewTokens: NEW_TOKENS, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false, ...overrides,
  };
}

describe.each(EXPORTS)('ort-genai-tiny/$folder', (model) => {
  it('opens as it is: an ONNX Runtime GenAI folder, its config derived from genai_config.json, its I/O by its names', async () => {
    const inspection = await inspectModel(join(TINY, model.folder));
    expect(inspection.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(inspection.layout).toMatchObject({ kind: 'ort-genai', configFile: 'genai_config.json', graph: model.graph });
    expect(inspection.config!.sourceName).toBe(`${model.folder}/genai_config.json`);
    expect(inspection.io!.kvLayers.map((layer) => layer.layer)).toEqual(model.kvLayers);
    expect(inspection.precision!.summary).toBe(model.precision);
  });

  it('the dynamic cache\'s greedy ids equal a hand-written onnxruntime loop', async () => {
    const expected = await handGreedy(join(TINY, model.folder, model.graph), model.io, model.prompt, NEW_TOKENS);
    const result = await runGeneration(settings(model.folder, model.prompt));
    expect(result.generatedTokenIds).toEqual(expected);
  });

  it('runs with the quantized cache (full-attention layers quantized)', async () => {
    const result = await runGeneration(settings(model.folder, model.prompt, { cacheMode: 'quantized' }));
    expect(result.generatedTokenIds).toHaveLength(NEW_TOKENS);
    expect(result.flushCounts.flatMap((count, layer) => (count === null ? [] : [layer]))).toEqual(model.kvLayers);
    expect(result.layerErrors.filter((error) => error !== null).every((error) => error!.key.relFroErr > 0)).toBe(true);
  });
});

describe('what the real exports say', () => {
  it('llama-fp16: the external data the header references, sized without reading it', async () => {
    const inspection = await inspectModel(join(TINY, 'llama-fp16'));
    expect(inspection.externalData!.files.map((file) => file.path)).toEqual(['model.onnx.data']);
    expect(inspection.externalData!.totalBytes).toBe(35909 + 2130080);
    expect(inspection.io).toMatchObject({ kvDtype: 'float16', logitsType: 'float16', inputIdsType: 'int64' });
  });

  it('gpt2-combined-past: int32 inputs and the combined past, recognized from genai_config.json', async () => {
    const inspection = await inspectModel(join(TINY, 'gpt2-combined-past'));
    expect(inspection.naming!.kv).toEqual({ packing: 'combined', past: 'past_%d', present: 'present_%d' });
    expect(inspection.io).toMatchObject({ inputIdsType: 'int32', attentionMaskType: 'int32', positionIdsType: 'int32' });
    expect(inspection.io!.kvLayers[0]).toMatchObject({ packing: 'combined', pastKey: 'past_0', presentKey: 'present_0', keyShape: ['batch_size', 4, 'past_seq_len', 8] });
  });

  it('lfm2-hybrid-stub: transformers\' verdict on its layer types, and its conv states', async () => {
    const inspection = await inspectModel(join(TINY, 'lfm2-hybrid-stub'));
    expect(inspection.config!.layers.actualKinds).toEqual(['conv', 'full_attention', 'conv', 'full_attention']);
    expect(inspection.io!.states.map((state) => state.input)).toEqual(['past_conv.0', 'past_conv.2']);
    expect(inspection.hasTokenizer).toBe(false);
    await expect(runGeneration(settings('lfm2-hybrid-stub', [5, 6, 7], { cacheMode: 'quantized', quantization: { ...QUANTIZED, layerPolicy: 'all' } })))
      .rejects.toMatchObject({ name: 'PreflightRefusedError', message: expect.stringContaining("We found the following invalid layer types: {'conv'}") });
  });
});
