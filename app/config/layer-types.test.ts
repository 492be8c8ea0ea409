import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import type { LayerTypeDerivation } from './layer-types.js';
import { modelConfigFromObject } from './model-config.js';

function layersOf(config: Record<string, unknown>): LayerTypeDerivation {
  return modelConfigFromObject({ num_attention_heads: 4, hidden_size: 64, ...config }, 'c.json').layers;
}

function indicesOf(types: readonly string[], wanted: string): number[] {
  return types.flatMap((type, index) => (type === wanted ? [index] : []));
}

describe('fallback ladder (spec §2.2)', () => {
  it('makes every layer sliding when sliding_window has a value', () => {
    const layers = layersOf({ model_type: 'phi3', num_hidden_layers: 3, sliding_window: 2047 });
    expect(layers.layerTypes).toEqual(['sliding_attention', 'sliding_attention', 'sliding_attention']);
    expect(layers.source).toBe('fallback-sliding-window');
  });

  it('treats "sliding_window": null as full attention, but an absent Mistral window as the class default 4096', () => {
    expect(layersOf({ model_type: 'mistral', num_hidden_layers: 2, sliding_window: null }).layerTypes).toEqual(['full_attention', 'full_attention']);
    const absent = layersOf({ model_type: 'mistral', num_hidden_layers: 2 });
    expect(absent.layerTypes).toEqual(['sliding_attention', 'sliding_attention']);
    expect(absent.slidingWindow).toBe(4096);
  });

  it('uses attention_chunk_size when there is no sliding window', () => {
    const layers = layersOf({ model_type: 'custom', num_hidden_layers: 2, attention_chunk_size: 8192 });
    expect(layers.layerTypes).toEqual(['chunked_attention', 'chunked_attention']);
    expect(layers.attentionChunkSize).toBe(8192);
  });

  it('prefers sliding_window over attention_chunk_size', () => {
    expect(layersOf({ num_hidden_layers: 1, sliding_window: 16, attention_chunk_size: 32 }).layerTypes).toEqual(['sliding_attention']);
  });
});

describe('explicit layer_types', () => {
  it('are used as given, and must have one entry per layer', () => {
    expect(layersOf({ model_type: 'gemma2', num_hidden_layers: 2, layer_types: ['full_attention', 'full_attention'] }).layerTypes)
      .toEqual(['full_attention', 'full_attention']);
    expect(() => layersOf({ num_hidden_layers: 3, layer_types: ['full_attention'] }))
      .toThrow('layer_types has 1 entries but num_hidden_layers is 3');
  });

  it('are remapped from legacy names only by the families that do so', () => {
    const legacy = ['mamba', 'attention'];
    expect(layersOf({ model_type: 'qwen3_next', num_hidden_layers: 2, layer_types: legacy }).layerTypes).toEqual(['linear_attention', 'full_attention']);
    expect(layersOf({ model_type: 'granitemoehybrid', num_hidden_layers: 2, layer_types: legacy }).layerTypes).toEqual(['mamba', 'attention']);
  });

  it('are read through the attribute map (falcon_h1, nemotron_h: layers_block_type)', () => {
    const falcon = layersOf({ model_type: 'falcon_h1', num_hidden_layers: 2, layers_block_type: ['hybrid', 'full_attention'] });
    expect(falcon.layerTypes).toEqual(['hybrid', 'full_attention']);
    expect(falcon.source).toBe('config');
  });

  it('note the Mistral warning', () => {
    const layers = layersOf({ model_type: 'mistral', num_hidden_layers: 1, layer_types: ['sliding_attention'] });
    expect(layers.notes[0]).toContain('Detected Mistral model with layer_types');
  });
});

describe('family rules when config.json has no layer_types (spec §2.4)', () => {
  it('gemma3_text: sliding_window_pattern defaults to 6', () => {
    const layers = layersOf({ model_type: 'gemma3_text', num_hidden_layers: 13 });
    expect(indicesOf(layers.layerTypes, 'full_attention')).toEqual([5, 11]);
    expect(layers.source).toBe('family-rule');
  });

  it('gemma3_text: bidirectional attention halves the window (sliding_window // 2 + 1)', () => {
    expect(layersOf({ model_type: 'gemma3_text', num_hidden_layers: 1, sliding_window: 512, use_bidirectional_attention: true }).slidingWindow).toBe(257);
  });

  it('gemma3_text: a pattern of 0 is refused, as Python would divide by zero', () => {
    expect(() => layersOf({ model_type: 'gemma3_text', num_hidden_layers: 2, sliding_window_pattern: 0 })).toThrow(ConfigError);
  });

  it('cohere2: pattern defaults to 4', () => {
    expect(indicesOf(layersOf({ model_type: 'cohere2', num_hidden_layers: 8 }).layerTypes, 'full_attention')).toEqual([3, 7]);
  });

  it('qwen2: sliding only with use_sliding_window, from max_window_layers on', () => {
    const enabled = layersOf({ model_type: 'qwen2', num_hidden_layers: 6, use_sliding_window: true, sliding_window: 64, max_window_layers: 4 });
    expect(enabled.layerTypes).toEqual(['full_attention', 'full_attention', 'full_attention', 'full_attention', 'sliding_attention', 'sliding_attention']);
    expect(enabled.slidingWindow).toBe(64);
    const disabled = layersOf({ model_type: 'qwen2', num_hidden_layers: 6, sliding_window: 64, max_window_layers: 4 });
    expect(indicesOf(disabled.layerTypes, 'sliding_attention')).toEqual([]);
    expect(disabled.slidingWindow).toBeNull();
  });

  it('qwen3: sliding_window becomes None without use_sliding_window even when layer_types are given', () => {
    expect(layersOf({ model_type: 'qwen3', num_hidden_layers: 1, sliding_window: 64, layer_types: ['full_attention'] }).slidingWindow).toBeNull();
  });

  it('llama4_text: every 4th layer full (NoPE), the rest chunked; an explicit no_rope_layers wins', () => {
    expect(indicesOf(layersOf({ model_type: 'llama4_text', num_hidden_layers: 8 }).layerTypes, 'full_attention')).toEqual([3, 7]);
    expect(layersOf({ model_type: 'llama4_text', num_hidden_layers: 3, no_rope_layers: [0, 1, 1] }).layerTypes)
      .toEqual(['full_attention', 'chunked_attention', 'chunked_attention']);
  });

  it('olmo3 and gpt_oss', () => {
    expect(indicesOf(layersOf({ model_type: 'olmo3', num_hidden_layers: 8 }).layerTypes, 'full_attention')).toEqual([3, 7]);
    expect(indicesOf(layersOf({ model_type: 'gpt_oss', num_hidden_layers: 4 }).layerTypes, 'full_attention')).toEqual([1, 3]);
  });

  it('exaone4: numeric pattern, the string form read per character, and the ZeroDivisionError case', () => {
    expect(indicesOf(layersOf({ model_type: 'exaone4', num_hidden_layers: 8 }).layerTypes, 'full_attention')).toEqual([3, 7]);
    const string = layersOf({ model_type: 'exaone4', num_hidden_layers: 6, sliding_window: 128, sliding_window_pattern: 'LLG' });
    expect(indicesOf(string.layerTypes, 'full_attention')).toEqual([2, 5]);
    expect(string.notes[0]).toContain('sliding_window_pattern is the string "LLG"');
    expect(() => layersOf({ model_type: 'exaone4', num_hidden_layers: 2, sliding_window: null }))
      .toThrow('raises ZeroDivisionError');
  });

  it('qwen3_next: full every full_attention_interval layers, linear elsewhere', () => {
    expect(layersOf({ model_type: 'qwen3_next', num_hidden_layers: 4, full_attention_interval: 2 }).layerTypes)
      .toEqual(['linear_attention', 'full_attention', 'linear_attention', 'full_attention']);
  });

  it('minimax: full at even i', () => {
    expect(layersOf({ model_type: 'minimax', num_hidden_layers: 3 }).layerTypes).toEqual(['full_attention', 'linear_attention', 'full_attention']);
  });

  it('lfm2: conv except full_attn_idxs; without them every layer is full', () => {
    expect(layersOf({ model_type: 'lfm2', num_hidden_layers: 3, full_attn_idxs: [1] }).layerTypes).toEqual(['conv', 'full_attention', 'conv']);
    expect(layersOf({ model_type: 'lfm2', num_hidden_layers: 2 }).layerTypes).toEqual(['full_attention', 'full_attention']);
  });

  it('granitemoehybrid without layer_types: all mamba', () => {
    expect(layersOf({ model_type: 'granitemoehybrid', num_hidden_layers: 2 }).layerTypes).toEqual(['mamba', 'mamba']);
  });

  it('nemotron_h: the pattern decides the layer count; default list; unknown characters refused', () => {
    const layers = layersOf({ model_type: 'nemotron_h', num_hidden_layers: 9, hybrid_override_pattern: 'M*-E' });
    expect(layers.numLayers).toBe(4);
    expect(layers.layerTypes).toEqual(['linear_attention', 'full_attention', 'mlp', 'moe']);
    expect(layers.notes[0]).toContain('num_hidden_layers = len(layers_block_type) = 4; config.json says 9');
    expect(layersOf({ model_type: 'nemotron_h' }).layerTypes).toEqual(['linear_attention', 'moe', 'full_attention', 'mlp']);
    expect(layersOf({ model_type: 'nemotron_h', layers_block_type: ['mamba', 'attention'] }).layerTypes).toEqual(['linear_attention', 'full_attention']);
    expect(() => layersOf({ model_type: 'nemotron_h', hybrid_override_pattern: 'M*X' })).toThrow('has "X" at position 2');
  });
});

describe('num_kv_shared_layers (spec §2.2 step 2)', () => {
  it('drops the shared tail from what QuantizedCache validates, not from the layer count', () => {
    const layers = layersOf({ model_type: 'gemma3n_text', num_hidden_layers: 10, num_kv_shared_layers: 5 });
    expect(layers.numLayers).toBe(10);
    expect(layers.layerTypes).toEqual(['sliding_attention', 'sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention']);
    expect(layers.layers.filter((layer) => layer.sharesKv).map((layer) => layer.index)).toEqual([5, 6, 7, 8, 9]);
    expect(layers.layers[9]).toMatchObject({ type: 'full_attention', hasKvCache: false, sharesKv: true });
  });

  it('leaves nothing to validate when every layer is shared, as Python slicing does', () => {
    expect(layersOf({ num_hidden_layers: 2, num_kv_shared_layers: 5 }).layerTypes).toEqual([]);
  });

  it('uses gemma3n_text class default of 15 shared layers', () => {
    expect(layersOf({ model_type: 'gemma3n_text', num_hidden_layers: 35 }).layerTypes).toHaveLength(20);
  });
});

describe('actual layer kinds', () => {
  it('Jamba: transformers sees full_attention everywhere; kvscope sees mamba outside attn_layer_period/offset', () => {
    const layers = layersOf({ model_type: 'jamba', num_hidden_layers: 8, sliding_window: null, attn_layer_period: 4, attn_layer_offset: 1 });
    expect(layers.layerTypes).toEqual(Array(8).fill('full_attention'));
    expect(layers.layers.filter((layer) => layer.hasKvCache).map((layer) => layer.index)).toEqual([1, 5]);
    expect(layers.layers[0]).toMatchObject({ type: 'full_attention', actualKind: 'mamba', hasKvCache: false });
    expect(layers.notes[0]).toContain("transformers' get_layer_types_and_kwargs does not read it");
  });

  it('Bamba without attn_layer_indices is all mamba', () => {
    expect(layersOf({ model_type: 'bamba', num_hidden_layers: 2 }).layers.map((layer) => layer.actualKind)).toEqual(['mamba', 'mamba']);
  });

  it('legacy "attention" is full attention; conv and linear attention keep no KV cache', () => {
    const granite = layersOf({ model_type: 'granitemoehybrid', num_hidden_layers: 2, layer_types: ['mamba', 'attention'] });
    expect(granite.layers.map((layer) => [layer.actualKind, layer.hasKvCache])).toEqual([['mamba', false], ['full_attention', true]]);
    const lfm2 = layersOf({ model_type: 'lfm2', num_hidden_layers: 2, full_attn_idxs: [1] });
    expect(lfm2.layers.map((layer) => layer.hasKvCache)).toEqual([false, true]);
  });

  it('notes layer types kvscope does not know, and lists the actual kinds', () => {
    const layers = layersOf({ num_hidden_layers: 2, layer_types: ['full_attention', 'mystery'] });
    expect(layers.actualKinds).toEqual(['full_attention', 'mystery']);
    expect(layers.layers[1]).toMatchObject({ hasKvCache: true });
    expect(layers.notes).toEqual(['kvscope does not know the layer type(s) mystery; it assumes they keep a KV cache (kept unquantized under full-attention-only).']);
  });

  it('zamba and nemotron_h call their mamba layers linear_attention; kvscope calls them mamba', () => {
    const zamba = layersOf({ model_type: 'zamba', num_hidden_layers: 4 });
    expect(zamba.layerTypes).toEqual(['linear_attention', 'linear_attention', 'hybrid', 'linear_attention']);
    expect(zamba.layers.map((layer) => layer.actualKind)).toEqual(['mamba', 'mamba', 'hybrid', 'mamba']);
    expect(zamba.layers[2]?.hasKvCache).toBe(true);
  });
});
