import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { sharedDir } from '../node/golden.js';
import { modelConfigFromObject } from './model-config.js';
import { parseModelConfig } from './parse-model-config.js';
import { GEMMA_3_4B_IT } from './test-support/multimodal-model-configs.js';
import { configJson } from './test-support/published-configs.js';

const STORIES_CONFIG = resolve(sharedDir(), 'models', 'stories260k', 'config.json');

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseModelConfig', () => {
  it('reads the real stories260k config.json: a 5-layer Llama, all full attention', () => {
    const config = parseModelConfig(readFileSync(STORIES_CONFIG, 'utf8'), 'stories260k/config.json');
    expect(config.modelType).toBe('llama');
    expect(config.textConfigName).toBeNull();
    expect(config.layers.layerTypes).toEqual(Array(5).fill('full_attention'));
    expect(config.layers.source).toBe('fallback-full-attention');
    expect(config.geometry).toMatchObject({
      numLayers: 5, numAttentionHeads: 8, numKeyValueHeads: 4, headDim: 8, hiddenSize: 64, vocabSize: 512,
      slidingWindow: null, kvCacheLayers: [0, 1, 2, 3, 4], kvSharedLayers: [],
    });
    expect(config.notes).toEqual([]);
  });

  it('names the file and the parse position of invalid JSON', () => {
    const error = configError(() => parseModelConfig('{\n  "num_hidden_layers": 2,\n}', 'tiny/config.json'));
    expect(error.message).toMatch(/^tiny\/config\.json is not valid JSON: expected a double-quoted property name at line 3, column 1 \(position 28\)/);
  });

  it('refuses a document that is not an object', () => {
    expect(configError(() => parseModelConfig('[1, 2]', 'x.json')).message)
      .toBe("x.json should hold a JSON object (a model config) but holds a list of 2. Point kvscope at the model's config.json.");
    expect(configError(() => parseModelConfig('"llama"', 'x.json')).message).toContain('but holds "llama"');
  });

  it('says which field is missing and how to add it', () => {
    const error = configError(() => parseModelConfig('{"model_type": "llama", "num_attention_heads": 4, "hidden_size": 64}', 'm/config.json'));
    expect(error.message).toContain('m/config.json has no `num_hidden_layers`');
    expect(error.message).toContain('Add "num_hidden_layers": <number of decoder layers> to config.json');
  });

  it('reports a missing field inside the text sub-config with its path', () => {
    const error = configError(() => parseModelConfig('{"model_type": "x", "text_config": {"num_attention_heads": 4}}', 'm/config.json'));
    expect(error.message).toContain('m/config.json (text_config) has no `num_hidden_layers`');
  });

  it('rejects a layer count of the wrong type', () => {
    expect(configError(() => parseModelConfig('{"num_hidden_layers": "12"}', 'c.json')).message)
      .toBe('c.json: `num_hidden_layers` should be an integer but is "12". Fix it in config.json.');
  });

  it('names a non-finite field as the file wrote it, not as "null" (issue 9, failure 8)', () => {
    expect(configError(() => parseModelConfig('{"num_hidden_layers": NaN}', 'c.json')).message)
      .toBe('c.json: `num_hidden_layers` should be an integer but is NaN. Fix it in config.json.');
    expect(configError(() => parseModelConfig('{"num_hidden_layers": 1e309}', 'c.json')).message)
      .toBe('c.json: `num_hidden_layers` should be an integer but is 1e309. Fix it in config.json.');
    expect(configError(() => parseModelConfig('{"model_type": "x", "text_config": {"num_hidden_layers": -1E+999, "num_attention_heads": 4}}', 'c.json')).message)
      .toContain('`num_hidden_layers` should be an integer but is -1E+999.');
    expect(configError(() => modelConfigFromObject({ num_hidden_layers: Infinity }, 'c.json')).message).toContain('but is Infinity.');
  });

  it('needs the head count, and head_dim or hidden_size', () => {
    expect(configError(() => modelConfigFromObject({ num_hidden_layers: 2 }, 'c.json')).message).toContain('has no `num_attention_heads`');
    expect(configError(() => modelConfigFromObject({ num_hidden_layers: 2, num_attention_heads: 4 }, 'c.json')).message)
      .toContain('has neither `head_dim` nor `hidden_size`');
  });

  it('defaults KV heads to the attention heads and head_dim to hidden_size // heads', () => {
    const config = modelConfigFromObject({ model_type: 'gpt_neox', num_hidden_layers: 2, num_attention_heads: 12, hidden_size: 768 }, 'c.json');
    expect(config.geometry.numKeyValueHeads).toBe(12);
    expect(config.geometry.headDim).toBe(64);
  });

  it('reads GPT-2 names through its attribute map', () => {
    const config = modelConfigFromObject({ model_type: 'gpt2', n_layer: 12, n_head: 12, n_embd: 768, n_positions: 1024 }, 'gpt2/config.json');
    expect(config.geometry).toMatchObject({ numLayers: 12, numAttentionHeads: 12, headDim: 64, maxPositionEmbeddings: 1024 });
  });

  it('fills the Gemma3 text config from the class defaults and says so', () => {
    const config = parseModelConfig(configJson(GEMMA_3_4B_IT), 'gemma-3-4b-it/config.json');
    expect(config.textConfigName).toBe('text_config');
    expect(config.defaultedFields).toEqual(['sliding_window_pattern', 'num_attention_heads', 'num_key_value_heads', 'head_dim', 'vocab_size']);
    expect(config.geometry).toMatchObject({ numLayers: 34, numAttentionHeads: 8, numKeyValueHeads: 4, headDim: 256, hiddenSize: 2560, slidingWindow: 1024 });
    expect(config.notes[0]).toContain('gemma-3-4b-it/config.json (text_config) omits sliding_window_pattern, num_attention_heads');
  });

  it('infers the text model type of a wrapper whose text_config has none', () => {
    const config = modelConfigFromObject({ model_type: 'gemma3', text_config: { num_hidden_layers: 12 } }, 'c.json');
    expect(config.modelType).toBe('gemma3_text');
    expect(config.layers.allLayerTypes.filter((type) => type === 'full_attention')).toHaveLength(2);
  });

  it('surfaces the ambiguity error of get_text_config', () => {
    expect(() => parseModelConfig('{"text_config": {}, "generator": {}}', 'c.json'))
      .toThrow("Multiple valid text configs were found in the model config: ['generator', 'text_config'].");
  });
});
