import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedDir } from '../node/golden.js';
import { parseGenaiConfig } from './genai-config.js';
import { modelConfigFromGenai } from './genai-model-config.js';
import { runPreflight } from '../preflight/run-preflight.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';

const TINY = join(sharedDir(), 'models', 'ort-genai-tiny');
const read = (folder: string) => parseGenaiConfig(readFileSync(join(TINY, folder, 'genai_config.json'), 'utf8'), `${folder}/genai_config.json`);

describe('parseGenaiConfig on the model builder\'s own files', () => {
  it('llama-fp16: the fields under model.decoder, the I/O names, the token ids', () => {
    const genai = read('llama-fp16');
    expect(genai).toMatchObject({
      modelType: 'llama', bosTokenId: 0, eosTokenIds: [1], padTokenId: 2, vocabSize: 32000, contextLength: 2048, pastPresentShareBuffer: false,
      decoder: { filename: 'model.onnx', numHiddenLayers: 2, numAttentionHeads: 1, numKeyValueHeads: 1, headSize: 16, hiddenSize: 16, layerTypes: null },
    });
    expect(genai.decoder.inputs).toMatchObject({ past_key_names: 'past_key_values.%d.key', past_value_names: 'past_key_values.%d.value' });
    expect(genai.decoder.outputs).toMatchObject({ present_key_names: 'present.%d.key', logits: 'logits' });
  });

  it('gpt2: combined past names, no query-head count', () => {
    const genai = read('gpt2-combined-past');
    expect(genai.decoder).toMatchObject({ filename: 'past.onnx', numHiddenLayers: 5, numAttentionHeads: null, numKeyValueHeads: 4, headSize: 8 });
    expect(genai.decoder.inputs).toEqual({ past_names: 'past_%d' });
  });

  it('refuses a file without model.decoder.num_hidden_layers, saying where it belongs', () => {
    expect(() => parseGenaiConfig('{"model": {"type": "llama", "decoder": {"filename": "model.onnx"}}}', 'x/genai_config.json'))
      .toThrow('x/genai_config.json (model.decoder) has no positive "num_hidden_layers"');
    expect(() => parseGenaiConfig('{"model": {"type": "llama"}}', 'x/genai_config.json')).toThrow(/has no "decoder" object/);
  });
});

describe('modelConfigFromGenai: the config transformers would read', () => {
  it('llama-fp16: a 2-layer Llama, 1 KV head of 16, all full attention', () => {
    const config = modelConfigFromGenai(read('llama-fp16'));
    expect(config.sourceName).toBe('llama-fp16/genai_config.json');
    expect(config.geometry).toMatchObject({ numLayers: 2, numAttentionHeads: 1, numKeyValueHeads: 1, headDim: 16, vocabSize: 32000, maxPositionEmbeddings: 2048 });
    expect(runPreflight(config, DEFAULT_QUANTIZED_CACHE_SETTINGS).layerTypes).toEqual(['full_attention', 'full_attention']);
  });

  it('lfm2: the layer types from genai_config.json, and transformers\' verdict on them', () => {
    const config = modelConfigFromGenai(read('lfm2-hybrid-stub'));
    expect(config.layers.actualKinds).toEqual(['conv', 'full_attention', 'conv', 'full_attention']);
    expect(config.geometry.kvCacheLayers).toEqual([1, 3]);
    expect(config.notes[0]).toMatch(/gives no num_attention_heads; kvscope takes num_key_value_heads \(4\)/);
    const verdict = runPreflight(config, DEFAULT_QUANTIZED_CACHE_SETTINGS);
    expect(verdict.ok).toBe(false);
    expect(verdict.diagnostics[0]!.message).toContain(
      "`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: {'conv'}");
  });

  it('gpt2: five layers of 4 KV heads, head size 8', () => {
    expect(modelConfigFromGenai(read('gpt2-combined-past')).geometry).toMatchObject({ numLayers: 5, numKeyValueHeads: 4, headDim: 8, vocabSize: 1000 });
  });
});
