import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { GPT2_COMBINED_NAMING, OPTIMUM_NAMING, type IoNaming } from '../../engine/io-naming.js';
import type { GenerationResult } from '../../engine/generation-result.js';
import type { RunSettings } from '../../engine/types.js';
import { TINY_DEFAULTS, type TinyDecoderOptions } from '../../model-layout/test-support/tiny-decoder.js';
import { OnnxDataType } from '../../onnx/element-types.js';
import { releaseCachedSessions } from '../ort/session-cache.js';
import { runGeneration } from '../run-generation.js';
import { inspectModel } from './inspect-model.js';
import { handGreedy, tinyConfigJson, writeFixtureFolder, type FixtureFolder } from './test-support/layout-fixtures.js';

/**
 * Every layout kvscope opens, each built by kvscope's graph builder from the same weights, opened as
 * it is, and run: the dynamic cache's greedy ids equal a hand-written onnxruntime loop on the same
 * graph; the quantized cache's run equals the plain Optimum layout's (same K/V, so the same quantize
 * errors and bytes), whatever the names, packing, integer types or number of graphs.
 */
const PROMPT = [3, 14, 15, 9, 2, 6];
const NEW_TOKENS = 14;
const QUANTIZED = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, nbits: 2, groupSize: 8, residualLength: 4 };

const genaiNaming: IoNaming = {
  ...OPTIMUM_NAMING,
  source: 'genai',
  kv: { packing: 'per-layer', pastKey: 'past_key_%d', pastValue: 'past_value_%d', presentKey: ['present_key_%d'], presentValue: ['present_value_%d'] },
};
const lfm2Naming: IoNaming = { ...OPTIMUM_NAMING, source: 'genai', states: [{ past: 'past_conv.%d', present: 'present_conv.%d', kind: 'conv' }] };

function genaiConfig(o: Partial<TinyDecoderOptions>, decoder: Record<string, unknown>, search: Record<string, unknown> = {}): Record<string, unknown> {
  const t = { ...TINY_DEFAULTS, ...o };
  return {
    model: {
      type: t.convLayers.length > 0 ? 'lfm2' : 'llama', bos_token_id: 1, eos_token_id: 1000, pad_token_id: 0, vocab_size: t.vocab, context_length: 64,
      decoder: { filename: 'model.onnx', num_hidden_layers: t.layers, num_key_value_heads: t.kvHeads, head_size: t.headDim, ...decoder },
    },
    search,
  };
}

interface Case {
  readonly name: string;
  readonly folder: FixtureFolder;
  /** the graph the hand loop runs (and the prefill graph, for the pair) */
  readonly graph: string;
  readonly prefill?: string;
  readonly options: TinyDecoderOptions;
  readonly kind: string;
  readonly label: RegExp;
  /** the cases with the same K/V (dtype) whose quantized runs must agree */
  readonly family: 'fp32' | 'fp16' | 'hybrid' | 'gqa';
  readonly settings?: Partial<RunSettings>;
}

const fp16 = { kvType: 'float16', logitsType: 'float16' } as const;
const CASES: Case[] = [
  {
    name: 'Optimum: onnx/model.onnx, per-layer past_key_values, int64', kind: 'optimum', label: /^Hugging Face \/ Optimum export \(config\.json, onnx\/model\.onnx\)$/, family: 'fp32',
    folder: { graphs: [{ path: 'onnx/model.onnx' }] }, graph: 'onnx/model.onnx', options: TINY_DEFAULTS,
  },
  {
    name: 'GPT-2 combined past_N [2, batch, heads, seq, head_dim] with int32 ids, mask and positions', kind: 'single-graph', label: /single decoder graph \(config\.json, past\.onnx\)/, family: 'fp32',
    folder: { graphs: [{ path: 'past.onnx', options: { naming: GPT2_COMBINED_NAMING, idsType: 'int32' } }] }, graph: 'past.onnx',
    options: { ...TINY_DEFAULTS, naming: GPT2_COMBINED_NAMING, idsType: 'int32' },
  },
  {
    name: 'Optimum merged decoder: decoder_model_merged.onnx with use_cache_branch and an If node', kind: 'optimum-merged', label: /^Optimum merged decoder/, family: 'fp32',
    folder: { graphs: [{ path: 'onnx/decoder_model_merged.onnx', options: { merged: true } }] }, graph: 'onnx/decoder_model_merged.onnx',
    options: { ...TINY_DEFAULTS, merged: true },
  },
  {
    name: 'the legacy Optimum pair: decoder_model.onnx for the prefill, decoder_with_past_model.onnx after', kind: 'optimum-split', label: /^Optimum decoder pair \(config\.json, onnx\/decoder_model\.onnx, onnx\/decoder_with_past_model\.onnx\)$/, family: 'fp32',
    folder: { graphs: [{ path: 'onnx/decoder_model.onnx', options: { withPast: false } }, { path: 'onnx/decoder_with_past_model.onnx' }] },
    graph: 'onnx/decoder_with_past_model.onnx', prefill: 'onnx/decoder_model.onnx', options: TINY_DEFAULTS,
  },
  {
    name: 'ONNX Runtime GenAI with shared past/present buffers (presents longer than the valid length)', kind: 'ort-genai', label: /^ONNX Runtime GenAI folder/, family: 'fp32',
    folder: {
      configJson: null, graphs: [{ path: 'model.onnx', options: { naming: genaiNaming, presentPadding: 3 } }],
      genaiConfig: genaiConfig({}, { inputs: { past_key_names: 'past_key_%d', past_value_names: 'past_value_%d' }, outputs: { present_key_names: 'present_key_%d', present_value_names: 'present_value_%d' } }, { past_present_share_buffer: true }),
    },
    graph: 'model.onnx', options: { ...TINY_DEFAULTS, naming: genaiNaming, presentPadding: 3 },
  },
  {
    name: 'ONNX Runtime GenAI model builder: genai_config.json only, model.onnx + model.onnx.data, its own I/O names, fp16 KV and logits', kind: 'ort-genai',
    label: /^ONNX Runtime GenAI folder \(genai_config\.json, model\.onnx\)$/, family: 'fp16',
    folder: {
      configJson: null,
      graphs: [{ path: 'model.onnx', options: { naming: genaiNaming, ...fp16 }, externalData: { location: () => 'model.onnx.data' } }],
      genaiConfig: genaiConfig({}, { inputs: { past_key_names: 'past_key_%d', past_value_names: 'past_value_%d' }, outputs: { present_key_names: 'present_key_%d', present_value_names: 'present_value_%d' } }),
    },
    graph: 'model.onnx', options: { ...TINY_DEFAULTS, naming: genaiNaming, ...fp16 },
  },
  {
    name: 'transformers.js variant model_q4f16.onnx with .onnx_data and .onnx_data_1, transformers.js_config', kind: 'transformers.js',
    label: /^transformers\.js variant q4f16 \(config\.json, onnx\/model_q4f16\.onnx\)$/, family: 'fp16',
    folder: {
      configJson: tinyConfigJson(TINY_DEFAULTS, { 'transformers.js_config': { dtype: 'q4f16', kv_cache_dtype: { q4f16: 'float16' }, use_external_data_format: { 'model_q4f16.onnx': 2 } } }),
      graphs: [{
        path: 'onnx/model_q4f16.onnx', options: fp16,
        externalData: { location: (i) => (i === 0 ? 'model_q4f16.onnx_data' : `model_q4f16.onnx_data_${i}`), chunkBytes: 10_000, minBytes: 1000 },
      }],
    },
    graph: 'onnx/model_q4f16.onnx', options: { ...TINY_DEFAULTS, ...fp16 },
  },
  {
    name: 'the model builder\'s GroupQueryAttention (com.microsoft contrib op), genai_config.json only', kind: 'ort-genai', label: /^ONNX Runtime GenAI folder/, family: 'gqa',
    folder: { configJson: null, graphs: [{ path: 'model.onnx', options: { attention: 'gqa' } }], genaiConfig: genaiConfig({}, {}) },
    graph: 'model.onnx', options: { ...TINY_DEFAULTS, attention: 'gqa' },
  },
  {
    name: 'an LFM2-like hybrid: conv layers whose state the logits depend on, genai_config.json only, no tokenizer', kind: 'ort-genai', label: /^ONNX Runtime GenAI folder/, family: 'hybrid',
    folder: {
      configJson: null, graphs: [{ path: 'model.onnx', options: { naming: lfm2Naming, layers: 4, convLayers: [0, 2] } }],
      genaiConfig: genaiConfig({ layers: 4, convLayers: [0, 2] }, {
        layer_types: ['conv', 'full_attention', 'conv', 'full_attention'], inputs: { past_conv_names: 'past_conv.%d' }, outputs: { present_conv_names: 'present_conv.%d' },
      }),
    },
    graph: 'model.onnx', options: { ...TINY_DEFAULTS, naming: lfm2Naming, layers: 4, convLayers: [0, 2] },
    settings: { quantization: { ...QUANTIZED, layerPolicy: 'full-attention-only' } },
  },
];

let root: string;
const folders = new Map<string, string>();
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'kvscope-layouts-'));
  for (const [index, testCase] of CASES.entries()) folders.set(testCase.name, await writeFixtureFolder(join(root, `case-${index}`), testCase.folder));
});
afterAll(async () => {
  await releaseCachedSessions();
  rmSync(root, { recursive: true, force: true });
});

function settings(model: string, overrides: Partial<RunSettings>): RunSettings {
  return {
    model, executionProvider: 'cpu', cacheMode: 'dynamic', quantization: QUANTIZED, prompt: '', promptTokenIds: PROMPT, maxNewTokens: NEW_TOKENS,
    sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false, ...overrides,
  };
}

const quantizedRuns = new Map<string, GenerationResult>();

describe.each(CASES)('$name', (testCase) => {
  it('opens as it is: the layout, the config and the I/O are recognized before any run', async () => {
    const inspection = await inspectModel(folders.get(testCase.name)!);
    expect(inspection.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(inspection.layout).toMatchObject({ kind: testCase.kind, graph: testCase.graph, prefillGraph: testCase.prefill ?? null });
    expect(inspection.layout!.label).toMatch(testCase.label);
    expect(inspection.io!.kvLayers.map((layer) => layer.layer)).toEqual(testCase.options.convLayers.length > 0 ? [1, 3] : [0, 1]);
  });

  it('runs with the dynamic cache: greedy ids equal a hand-written onnxruntime loop on the same graph', async () => {
    const dir = folders.get(testCase.name)!;
    const expected = await handGreedy(join(dir, testCase.graph), testCase.options, PROMPT, NEW_TOKENS, { prefillGraph: testCase.prefill === undefined ? null : join(dir, testCase.prefill) });
    const result = await runGeneration(settings(dir, { cacheMode: 'dynamic', ...testCase.settings }));
    expect(result.generatedTokenIds).toEqual(expected);
    expect(new Set(expected).size).toBeGreaterThan(2);
  });

  it('runs with the quantized cache', async () => {
    const result = await runGeneration(settings(folders.get(testCase.name)!, { cacheMode: 'quantized', ...testCase.settings }));
    expect(result.generatedTokenIds).toHaveLength(NEW_TOKENS);
    const flushes = result.flushCounts.filter((count): count is number => count !== null);
    expect(flushes.length).toBe(2);
    expect(Math.min(...flushes)).toBeGreaterThan(0);
    const family = CASES.find((other) => other.family === testCase.family)!;
    const reference = quantizedRuns.get(family.name);
    if (reference === undefined) quantizedRuns.set(testCase.name, result);
    else {
      // the same keys and values reached the cache, through whatever names, packing and graphs
      expect(result.generatedTokenIds).toEqual(reference.generatedTokenIds);
      expect(result.layerErrors).toEqual(reference.layerErrors);
      // (stored bytes; the JavaScript working buffers differ where one run dequantizes in the graph and the other on the host)
      expect({ ...result.kvBytesTotal, workingBytes: 0 }).toEqual({ ...reference.kvBytesTotal, workingBytes: 0 });
    }
  });
});

describe('what the layouts say about themselves', () => {
  it('transformers.js: precision from the tensor types, every external data chunk counted', async () => {
    const testCase = CASES.find((c) => c.kind === 'transformers.js')!;
    const dir = folders.get(testCase.name)!;
    const inspection = await inspectModel(dir);
    // the file name says q4f16; the graph holds fp32 weights, fp16 KV and logits
    expect(inspection.precision!.summary).toBe('fp32 weights · fp16 KV · fp16 logits');
    expect(inspection.externalData!.files.map((file) => file.path)).toEqual(['onnx/model_q4f16.onnx_data', 'onnx/model_q4f16.onnx_data_1']);
    const onDisk = ['model_q4f16.onnx', 'model_q4f16.onnx_data', 'model_q4f16.onnx_data_1'].reduce((sum, file) => sum + statSync(join(dir, 'onnx', file)).size, 0);
    expect(inspection.externalData!.totalBytes).toBe(onDisk);
  });

  it('a missing external data file is found before any session, with the file named', async () => {
    const testCase = CASES.find((c) => c.kind === 'transformers.js')!;
    const dir = await writeFixtureFolder(join(root, 'missing-data'), testCase.folder);
    rmSync(join(dir, 'onnx', 'model_q4f16.onnx_data_1'));
    const inspection = await inspectModel(dir);
    expect(inspection.diagnostics[0]).toMatchObject({ code: 'onnx-external-data-missing', severity: 'error' });
    expect(inspection.diagnostics[0]!.message).toContain('onnx/model_q4f16.onnx_data_1');
    await expect(runGeneration(settings(dir, {}))).rejects.toMatchObject({ name: 'ModelLoadError', message: expect.stringContaining('onnx/model_q4f16.onnx_data_1') });
  });

  it('the LFM2-like state matters: a loop that drops the conv state generates other ids', async () => {
    const testCase = CASES.find((c) => c.family === 'hybrid')!;
    const dir = folders.get(testCase.name)!;
    const dropped = await handGreedy(join(dir, 'model.onnx'), testCase.options, PROMPT, NEW_TOKENS, { dropStates: true });
    const kept = await handGreedy(join(dir, 'model.onnx'), testCase.options, PROMPT, NEW_TOKENS);
    expect(dropped).toHaveLength(NEW_TOKENS);
    expect(dropped).not.toEqual(kept);
  });

  it('the LFM2-like folder: transformers\' verdict from genai_config.json\'s layer types', async () => {
    const testCase = CASES.find((c) => c.family === 'hybrid')!;
    const inspection = await inspectModel(folders.get(testCase.name)!);
    expect(inspection.layout).toMatchObject({ configFile: 'genai_config.json', crossCheck: null });
    expect(inspection.config!.layers.actualKinds).toEqual(['conv', 'full_attention', 'conv', 'full_attention']);
    expect(inspection.io!.states.map((state) => [state.input, state.output, state.kind, state.layer])).toEqual([
      ['past_conv.0', 'present_conv.0', 'conv', 0], ['past_conv.2', 'present_conv.2', 'conv', 2],
    ]);
    expect(inspection.diagnostics.find((d) => d.code === 'tokenizer-missing')).toMatchObject({ severity: 'warning', fix: expect.stringContaining('--prompt-ids') });
  });
});

describe('exports kvscope cannot feed are refused before the run, with the reason', () => {
  const refusals: [name: string, options: Partial<TinyDecoderOptions>, code: string, message: RegExp][] = [
    ['a pre-quantized uint8 KV cache', { kvType: 'uint8' }, 'io-kv-prequantized', /keeps a pre-quantized KV cache: `past_key_values\.0\.key` \(uint8/],
    ['KV scale inputs', { extraInputs: [{ name: 'past_key_values.0.key_scale', type: OnnxDataType.FLOAT, shape: ['batch_size', 2, 1] }] }, 'io-kv-prequantized', /past_key_values\.0\.key_scale/],
    ['paged attention', { extraInputs: [{ name: 'block_table', type: OnnxDataType.INT32, shape: ['batch_size', 'blocks'] }, { name: 'slot_mapping', type: OnnxDataType.INT64, shape: ['tokens'] }] },
      'io-paged-attention', /paged-attention inputs `block_table`/],
    ['a static cache written at write_indices', { extraInputs: [{ name: 'key_cache.0', type: OnnxDataType.FLOAT, shape: [1, 2, 64, 8] }, { name: 'write_indices', type: OnnxDataType.INT64, shape: [1] }] },
      'io-static-cache', /keeps a static KV cache/],
    ['an inputs_embeds-only decoder', { inputsEmbeds: true }, 'io-inputs-embeds', /takes `inputs_embeds` and no `input_ids`: it is the text decoder of a multimodal export/],
    ['bf16 KV', { kvType: 'bfloat16' }, 'io-kv-bf16', /are bfloat16\. onnxruntime-node has no bfloat16 tensors in JavaScript/],
    ['an input nobody feeds', { extraInputs: [{ name: 'pixel_values', type: OnnxDataType.FLOAT, shape: [1, 3, 8, 8] }] }, 'io-unexpected-input', /inputs kvscope does not know how to feed: `pixel_values`/],
  ];

  it.each(refusals)('%s', async (name, options, code, message) => {
    const dir = await writeFixtureFolder(join(root, `refused-${code}-${name.length}`), { graphs: [{ path: 'onnx/model.onnx', options }] });
    const inspection = await inspectModel(dir);
    expect(inspection.ok).toBe(false);
    const diagnostic = inspection.diagnostics.find((d) => d.code === code)!;
    expect(diagnostic.message).toMatch(message);
    expect(diagnostic.fix).toBeTruthy();
    await expect(runGeneration(settings(dir, {}))).rejects.toMatchObject({ name: 'ModelRefusedError', diagnostics: expect.arrayContaining([expect.objectContaining({ code })]) });
  });
});
