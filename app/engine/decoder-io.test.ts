import { describe, expect, it } from 'vitest';
import { parseModelConfig } from '../config/parse-model-config.js';
import { checkDecoderIo } from './check-decoder-io.js';
import type { ValueInfo } from './decoder-session.js';
import { readDecoderIo, stateOutputCandidates } from './decoder-io.js';
import { GPT2_COMBINED_NAMING, OPTIMUM_NAMING, type IoNaming } from './io-naming.js';

const kv = (prefix: string, layers: number[], type = 'float32', heads: number | string = 4, headDim: number | string = 8): ValueInfo[] =>
  layers.flatMap((i) => ['key', 'value'].map((part) => ({ name: `${prefix}.${i}.${part}`, type, shape: ['batch_size', heads, 'seq', headDim] })));
const tokens: ValueInfo[] = [
  { name: 'input_ids', type: 'int64', shape: ['batch_size', 'sequence_length'] },
  { name: 'attention_mask', type: 'int64', shape: ['batch_size', 'total'] },
  { name: 'position_ids', type: 'int64', shape: ['batch_size', 'sequence_length'] },
];
const logits: ValueInfo = { name: 'logits', type: 'float32', shape: ['batch_size', 'sequence_length', 512] };
const stories = (overrides: object = {}) => parseModelConfig(JSON.stringify({
  model_type: 'llama', num_hidden_layers: 5, num_attention_heads: 8, num_key_value_heads: 4, head_dim: 8, hidden_size: 64, vocab_size: 512, ...overrides,
}), 'stories/config.json');

describe('readDecoderIo', () => {
  it('reads an Optimum decoder-with-past signature by name', () => {
    const { io, diagnostics } = readDecoderIo([...tokens, ...kv('past_key_values', [0, 1, 2, 3, 4], 'float16')], [logits, ...kv('present', [0, 1, 2, 3, 4], 'float16')], 'model_fp16.onnx');
    expect(diagnostics).toEqual([]);
    expect(io).toMatchObject({ inputIds: 'input_ids', attentionMask: 'attention_mask', positionIds: 'position_ids', logitsToKeep: null, kvDtype: 'float16' });
    expect(io!.kvLayers.map((l) => [l.layer, l.pastKey, l.presentValue])).toEqual([0, 1, 2, 3, 4].map((i) => [i, `past_key_values.${i}.key`, `present.${i}.value`]));
    expect(checkDecoderIo(io!, stories(), 'model_fp16.onnx')).toEqual([]);
  });

  it('recognizes num_logits_to_keep and hybrid states, and reports the states', () => {
    const conv: ValueInfo = { name: 'past_conv.1', type: 'float32', shape: ['batch_size', 64, 3] };
    const presentConv: ValueInfo = { name: 'present_conv.1', type: 'float32', shape: ['batch_size', 64, 3] };
    const { io, diagnostics } = readDecoderIo(
      [...tokens, { name: 'num_logits_to_keep', type: 'int64', shape: [] }, ...kv('past_key_values', [0, 2]), conv],
      [logits, ...kv('present', [0, 2]), presentConv], 'lfm2.onnx');
    expect(io!.logitsToKeep).toBe('num_logits_to_keep');
    expect(io!.states).toEqual([{ input: 'past_conv.1', output: 'present_conv.1', kind: 'conv', layer: 1, type: 'float32', shape: ['batch_size', 64, 3] }]);
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'io-hybrid-state', severity: 'info', layers: [1] })]);
    expect(stateOutputCandidates('past_key_values.3.ssm_state')).toContain('present.3.ssm_state');
  });

  it('lists what it cannot drive, each with a fix', () => {
    const { io, diagnostics } = readDecoderIo(
      [{ name: 'inputs_embeds', type: 'float32', shape: [1, 's', 64] }, ...kv('past_key_values', [0]), { name: 'past_ssm.0', type: 'float32', shape: [1, 4] }],
      [{ name: 'logits', type: 'int64', shape: [1, 1, 5] }], 'odd.onnx');
    expect(io).toBeNull();
    expect(diagnostics.map((d) => d.code)).toEqual(['io-inputs-embeds', 'io-logits', 'io-missing-output', 'io-hybrid-state']);
    for (const d of diagnostics) expect(d.fix).toBeTruthy();
  });
});

describe('readDecoderIo: the names and packing the layout gives', () => {
  it('reads genai_config.json-style names instead of Optimum\'s', () => {
    const naming: IoNaming = {
      ...OPTIMUM_NAMING, source: 'genai_config.json',
      kv: { packing: 'per-layer', pastKey: 'past_key_%d', pastValue: 'past_value_%d', presentKey: ['present_key_%d'], presentValue: ['present_value_%d'] },
    };
    const past = [0, 1].flatMap((i) => ['key', 'value'].map((part) => ({ name: `past_${part}_${i}`, type: 'float32', shape: ['b', 4, 'p', 8] })));
    const present = [0, 1].flatMap((i) => ['key', 'value'].map((part) => ({ name: `present_${part}_${i}`, type: 'float32', shape: ['b', 4, 't', 8] })));
    const { io, diagnostics } = readDecoderIo([...tokens, ...past], [logits, ...present], 'model.onnx', naming);
    expect(diagnostics).toEqual([]);
    expect(io!.kvLayers.map((l) => [l.pastKey, l.presentValue])).toEqual([['past_key_0', 'present_value_0'], ['past_key_1', 'present_value_1']]);
    // Optimum's naming does not find them
    expect(readDecoderIo([...tokens, ...past], [logits, ...present], 'model.onnx').diagnostics.map((d) => d.code)).toEqual(['io-unexpected-input']);
  });

  it('reads GPT-2\'s combined past_N [2, batch, heads, seq, head_dim] and int32 inputs', () => {
    const int32 = tokens.map((info) => ({ ...info, type: 'int32' }));
    const past = [0, 1].map((i) => ({ name: `past_${i}`, type: 'float32', shape: [2, 'batch_size', 4, 'past_seq_len', 8] }));
    const present = [0, 1].map((i) => ({ name: `present_${i}`, type: 'float32', shape: [2, 'batch_size', 4, 'total_seq_len', 8] }));
    const { io, diagnostics } = readDecoderIo([...int32, ...past], [logits, ...present], 'past.onnx', GPT2_COMBINED_NAMING);
    expect(diagnostics).toEqual([]);
    expect(io).toMatchObject({ inputIdsType: 'int32', attentionMaskType: 'int32', positionIdsType: 'int32' });
    expect(io!.kvLayers[1]).toEqual({
      layer: 1, packing: 'combined', pastKey: 'past_1', pastValue: 'past_1', presentKey: 'present_1', presentValue: 'present_1',
      dtype: 'float32', keyShape: ['batch_size', 4, 'past_seq_len', 8], valueShape: ['batch_size', 4, 'past_seq_len', 8],
    });
    const fourD = readDecoderIo([...int32, { ...past[0]!, shape: ['b', 4, 'p', 8] }], [logits, present[0]!], 'past.onnx', GPT2_COMBINED_NAMING);
    expect(fourD.diagnostics.map((d) => d.code)).toEqual(['io-kv-shape']);
  });

  it('takes use_cache_branch (bool) and refuses int16 ids', () => {
    const merged = readDecoderIo([...tokens, { name: 'use_cache_branch', type: 'bool', shape: [1] }, ...kv('past_key_values', [0])], [logits, ...kv('present', [0])], 'merged.onnx');
    expect(merged.io!.useCacheBranch).toBe('use_cache_branch');
    const int16 = readDecoderIo([{ ...tokens[0]!, type: 'int16' }, ...kv('past_key_values', [0])], [logits, ...kv('present', [0])], 'odd.onnx');
    expect(int16.diagnostics.map((d) => d.code)).toEqual(['io-unexpected-input']);
    expect(int16.diagnostics[0]!.message).toContain('kvscope feeds int64 or int32 ids, mask and positions');
  });

  it('names what kvscope cannot feed for what it is', () => {
    const codes = (inputs: ValueInfo[]): string[] => readDecoderIo([...tokens, ...inputs], [logits, ...kv('present', [0])], 'g.onnx').diagnostics.map((d) => d.code);
    expect(codes(kv('past_key_values', [0], 'uint8'))).toEqual(['io-kv-prequantized']);
    expect(codes(kv('past_key_values', [0], 'float8e4m3fn'))).toEqual(['io-kv-prequantized']);
    expect(codes(kv('past_key_values', [0], 'bfloat16'))).toEqual(['io-kv-bf16', 'io-kv-dtype']);
    expect(codes([...kv('past_key_values', [0]), { name: 'block_tables', type: 'int32', shape: [1, 8] }])).toEqual(['io-paged-attention']);
    expect(codes([...kv('past_key_values', [0]), { name: 'cache_position', type: 'int64', shape: [1] }])).toEqual(['io-static-cache']);
  });
});

describe('checkDecoderIo: config.json against the graph', () => {
  const io = readDecoderIo([...tokens, ...kv('past_key_values', [0, 1, 2, 3, 4])], [logits, ...kv('present', [0, 1, 2, 3, 4])], 'model.onnx').io!;

  it('names a num_key_value_heads contradiction and the fix', () => {
    const [diagnostic] = checkDecoderIo(io, stories({ num_key_value_heads: 2 }), 'model.onnx');
    expect(diagnostic).toMatchObject({ code: 'io-kv-heads', severity: 'error', layers: [0, 1, 2, 3, 4] });
    expect(diagnostic!.message).toContain('stories/config.json says num_key_value_heads = 2, but model.onnx\'s past_key_values.0.key is [batch_size, 4, seq, 8] (4 KV heads) in 5 layers (0-4)');
    expect(diagnostic!.fix).toContain('"num_key_value_heads": 4');
  });

  it('names a head_dim contradiction', () => {
    expect(checkDecoderIo(io, stories({ head_dim: 16 }), 'model.onnx').map((d) => d.code)).toEqual(['io-head-dim']);
  });

  it('names a layer count contradiction', () => {
    const [diagnostic] = checkDecoderIo(io, stories({ num_hidden_layers: 6 }), 'model.onnx');
    expect(diagnostic).toMatchObject({ code: 'io-kv-layer-mismatch', layers: [5] });
    expect(diagnostic!.message).toMatch(/describes 6 decoder layers, 6 of them with a KV cache \(0-5\), but model\.onnx has past_key_values for 5 layers \(0-4\): no KV input for layer\(s\) 5/);
  });

  it('warns when the vocabulary differs', () => {
    expect(checkDecoderIo(io, stories({ vocab_size: 32000 }), 'model.onnx')).toEqual([expect.objectContaining({ code: 'io-logits', severity: 'warning' })]);
  });
});
