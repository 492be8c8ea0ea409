import { describe, expect, it } from 'vitest';
import { parseGenaiConfig } from '../config/genai-config.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import type { ValueInfo } from '../engine/decoder-session.js';
import { PrefillSplitSession } from './prefill-split-session.js';
import type { GraphHeader } from '../onnx/graph-header.js';
import { checkLayoutGraph } from './check-layout-graph.js';
import { crossCheckGenai } from './config-cross-check.js';
import { externalDataReport } from './external-data.js';
import { graphPrecision } from './graph-precision.js';
import { ioNamingFor } from './layout-naming.js';
import type { ModelLayout } from './model-layout.js';
import type { DecoderSession, SessionFeeds } from '../engine/decoder-session.js';
import { floatTensor, type HostTensor } from '../engine/host-tensor.js';

const genaiText = (decoder: object, search: object = {}): string =>
  JSON.stringify({ model: { type: 'llama', vocab_size: 10, decoder: { filename: 'model.onnx', num_hidden_layers: 1, num_key_value_heads: 2, head_size: 4, ...decoder } }, search });
const header = (patch: Partial<GraphHeader>): GraphHeader => ({
  irVersion: 8, producerName: '', producerVersion: '', opsetImports: [], metadata: {}, graphName: 'g', inputs: [], outputs: [], initializers: [], nodes: [], ...patch,
});
const layout: ModelLayout = { kind: 'ort-genai', label: '', configFile: 'genai_config.json', crossCheck: null, graph: 'model.onnx', prefillGraph: null, dtype: null };

describe('ioNamingFor: the names a layout\'s graph is read with', () => {
  it('genai_config.json\'s names, genai\'s defaults for the rest; its conv states', () => {
    const genai = parseGenaiConfig(genaiText({ inputs: { past_key_names: 'past.%d.k', past_value_names: 'past.%d.v', past_conv_names: 'conv_in.%d' }, outputs: { present_key_names: 'out.%d.k', present_conv_names: 'conv_out.%d' } }), 'g');
    const naming = ioNamingFor(genai, []);
    expect(naming.kv).toEqual({ packing: 'per-layer', pastKey: 'past.%d.k', pastValue: 'past.%d.v', presentKey: ['out.%d.k'], presentValue: ['present.%d.value'] });
    expect(naming.states).toEqual([{ past: 'conv_in.%d', present: 'conv_out.%d', kind: 'conv' }]);
    expect(ioNamingFor(parseGenaiConfig(genaiText({ inputs: { past_names: 'past_%d' } }), 'g'), []).kv).toEqual({ packing: 'combined', past: 'past_%d', present: 'present_%d' });
  });

  it('without genai_config.json: GPT-2\'s combined names when the graph has past_N, else Optimum\'s', () => {
    expect(ioNamingFor(null, [{ name: 'past_0', type: 'float32', shape: [] }]).kv.packing).toBe('combined');
    expect(ioNamingFor(null, [{ name: 'past_key_values.0.key', type: 'float32', shape: [] }]).source).toBe('Optimum');
  });
});

describe('checkLayoutGraph', () => {
  const genai = parseGenaiConfig(genaiText({}, { past_present_share_buffer: true }), 'm/genai_config.json');
  const config = parseModelConfig(JSON.stringify({ model_type: 'llama', num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 2, head_dim: 4 }), 'm/config.json');
  const inputs: ValueInfo[] = [
    { name: 'input_ids', type: 'int64', shape: ['b', 's'] },
    { name: 'past_key_values.0.key', type: 'float32', shape: ['b', 2, 'p', 4] },
    { name: 'past_key_values.0.value', type: 'float32', shape: ['b', 2, 'p', 4] },
  ];
  const outputs: ValueInfo[] = [
    { name: 'logits', type: 'float32', shape: ['b', 's', 10] },
    { name: 'present.0.key', type: 'float32', shape: ['b', 2, 't', 4] },
    { name: 'present.0.value', type: 'float32', shape: ['b', 2, 't', 4] },
  ];

  it('reads the I/O with the share-buffer flag and notes it', () => {
    const check = checkLayoutGraph({ graph: { inputs, outputs }, prefill: null }, { layout, config, genai, transformersJs: null });
    expect(check.io!.presentMayExceedValidLength).toBe(true);
    expect(check.diagnostics.map((d) => d.code)).toEqual(['layout-note']);
  });

  it('the legacy pair: the prefill graph must return every present the decode graph takes back', () => {
    const pairLayout: ModelLayout = { ...layout, kind: 'optimum-split', graph: 'onnx/decoder_with_past_model.onnx', prefillGraph: 'onnx/decoder_model.onnx' };
    const prefill = { inputs: inputs.slice(0, 1), outputs: outputs.slice(0, 2) };
    const check = checkLayoutGraph({ graph: { inputs, outputs }, prefill }, { layout: pairLayout, config, genai: null, transformersJs: null });
    expect(check.io).toBeNull();
    expect(check.diagnostics[0]).toMatchObject({ code: 'io-graph-pair' });
    expect(check.diagnostics[0]!.message).toBe('onnx/decoder_model.onnx does not return `present.0.value`, which onnx/decoder_with_past_model.onnx takes back as its past.');
  });

  it('a graph without past inputs: an error that points at the pair or the merged decoder', () => {
    const prefillOnly: ModelLayout = { ...layout, kind: 'optimum', graph: 'onnx/decoder_model.onnx' };
    const check = checkLayoutGraph({ graph: { inputs: inputs.slice(0, 1), outputs: outputs.slice(0, 1) }, prefill: null }, { layout: prefillOnly, config, genai: null, transformersJs: null });
    expect(check.diagnostics[0]).toMatchObject({ code: 'io-missing-input', fix: expect.stringContaining('decoder_with_past_model.onnx') });
  });

  it('transformers.js_config.kv_cache_dtype against the graph\'s KV type', () => {
    const check = checkLayoutGraph({ graph: { inputs, outputs }, prefill: null }, {
      layout: { ...layout, kind: 'transformers.js', dtype: 'q4f16' }, config, genai: null,
      transformersJs: { dtype: null, kvCacheDtype: { q4f16: 'float16' }, useExternalDataFormat: null },
    });
    expect(check.diagnostics.map((d) => [d.code, d.severity])).toEqual([['config-mismatch', 'warning']]);
  });
});

describe('graphPrecision: from tensor types, never from names', () => {
  it('names the dominant float type, or the quantization scheme and its storage', () => {
    const fp16 = header({ initializers: [{ name: 'w', type: 'float16', dims: [4], bytes: 800, external: null }, { name: 'b', type: 'float32', dims: [1], bytes: 4, external: null }] });
    expect(graphPrecision(fp16, 'float16', 'float32').summary).toBe('fp16 weights · fp16 KV · fp32 logits');
    const q4 = header({
      initializers: [{ name: 'q', type: 'uint8', dims: [8], bytes: 800, external: null }, { name: 's', type: 'float16', dims: [2], bytes: 40, external: null }],
      nodes: [{ opType: 'MatMulNBits', domain: 'com.microsoft', inputs: [], outputs: [] }],
    });
    expect(graphPrecision(q4, 'float16', 'float16').weights).toBe('MatMulNBits blocks (uint8), fp16 otherwise');
  });
});

describe('externalDataReport: what the header references, found beside the graph', () => {
  const withData = header({ initializers: [
    { name: 'a', type: 'float32', dims: [10], bytes: 40, external: { location: 'model.onnx_data', offset: 0, length: 40 } },
    { name: 'b', type: 'float32', dims: [10], bytes: 40, external: { location: './model.onnx_data_1', offset: 0, length: 40 } },
  ] });

  it('sizes every file the graph references, however it is named', () => {
    const report = externalDataReport(withData, 'onnx/model.onnx', { folder: '/m', files: [
      { path: 'onnx/model.onnx', bytes: 100 }, { path: 'onnx/model.onnx_data', bytes: 4096 }, { path: 'onnx/model.onnx_data_1', bytes: 512 },
    ] }, null);
    expect(report).toMatchObject({ missing: [], totalBytes: 100 + 4096 + 512, diagnostics: [] });
    expect(report.files.map((file) => file.path)).toEqual(['onnx/model.onnx_data', 'onnx/model.onnx_data_1']);
  });

  it('a referenced file that is not there is an error; transformers.js_config\'s chunk count is checked too', () => {
    const report = externalDataReport(withData, 'onnx/model.onnx', { folder: '/m', files: [{ path: 'onnx/model.onnx', bytes: 100 }, { path: 'onnx/model.onnx_data', bytes: 40 }] },
      { dtype: null, kvCacheDtype: null, useExternalDataFormat: { 'model.onnx': 3 } });
    expect(report.missing).toEqual(['onnx/model.onnx_data_1']);
    expect(report.diagnostics.map((d) => [d.code, d.severity])).toEqual([['onnx-external-data-missing', 'error'], ['onnx-external-data-missing', 'warning']]);
    expect(report.diagnostics[1]!.message).toContain('onnx/model.onnx_data_2');
  });
});

describe('crossCheckGenai: config.json against genai_config.json', () => {
  it('warns for each field both give differently, naming both values', () => {
    const config = parseModelConfig(JSON.stringify({ model_type: 'llama', num_hidden_layers: 2, num_attention_heads: 2, num_key_value_heads: 2, head_dim: 4, vocab_size: 10 }), 'm/config.json');
    const diagnostics = crossCheckGenai(config, parseGenaiConfig(genaiText({ num_hidden_layers: 2, num_key_value_heads: 1 }), 'm/genai_config.json'));
    expect(diagnostics.map((d) => d.message.split('.')[0])).toEqual(['m/config']);
    expect(diagnostics[0]!.message).toContain('says num_key_value_heads = 2, but m/genai_config.json says model.decoder.num_key_value_heads = 1');
  });
});

describe('PrefillSplitSession: the legacy pair as one session', () => {
  const session = (name: string, inputs: string[], log: string[]): DecoderSession => ({
    inputs: inputs.map((input) => ({ name: input, type: 'float32', shape: [] })), outputs: [], executionProvider: 'cpu',
    run: async (feeds: SessionFeeds) => { log.push(`${name}:${Object.keys(feeds).sort().join(',')}`); return {}; },
    release: (outputs: readonly HostTensor[]) => void log.push(`${name} release ${outputs.length}`),
    dispose: async () => void log.push(`${name} dispose`),
  });

  it('runs the prefill (empty past) on the first graph with only its inputs, every later step on the second', async () => {
    const log: string[] = [];
    const split = new PrefillSplitSession(session('prefill', ['input_ids'], log), session('decode', ['input_ids', 'past'], log), 'past');
    const ids: HostTensor = { type: 'int64', dims: [1, 1], data: BigInt64Array.of(1n) };
    await split.run({ input_ids: ids, past: floatTensor('float32', [1, 2, 0, 4], new Float32Array(0)) });
    await split.run({ input_ids: ids, past: floatTensor('float32', [1, 2, 1, 4], new Float32Array(8)) });
    split.release([ids]);
    expect(log).toEqual(['prefill:input_ids', 'decode:input_ids,past', 'prefill release 1', 'decode release 1']);
    expect(split.inputs.map((input) => input.name)).toEqual(['input_ids', 'past']);
  });
});
