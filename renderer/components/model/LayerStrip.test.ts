import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../../app/cache/cache-config.js';
import { parseModelConfig } from '../../../app/config/parse-model-config.js';
import { withSideTargets } from '../../../app/cache/cache-plan.js';
import { parseLayerMap } from '../../../app/cache/layer-map.js';
import { plannedFormats, plannedLayers } from './LayerStrip.js';

/** A llama of 5 full-attention layers (stories260k's geometry). */
const config = parseModelConfig(JSON.stringify({
  model_type: 'llama', num_hidden_layers: 5, num_attention_heads: 8, num_key_value_heads: 4, hidden_size: 64, max_position_embeddings: 512, vocab_size: 512,
}), 'config.json');

describe('the layer strip\'s plan', () => {
  it('shows the layers the kvscope extensions keep in full precision as such, as the cache plan decides', () => {
    const quantization = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { fullPrecisionFirstLayers: 1, layerMap: [{ layer: 3, fullPrecision: true as const }] } };
    expect(plannedLayers(config, { cacheMode: 'quantized', quantization })).toEqual(['full-precision', 'quantized', 'quantized', 'full-precision', 'quantized']);
    expect(plannedLayers(config, { cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS })).toEqual(Array(5).fill('quantized'));
    expect(plannedLayers(config, { cacheMode: 'dynamic', quantization })).toEqual(Array(5).fill('full-precision'));
  });

  it('shows a layer whose values the plan keeps in full precision as keys-only, and full layers of a YAML map as full precision (issue 25)', () => {
    const layerMap = parseLayerMap('1: {nbits_key: 4, nbits_value: full}\n2: {nbits_key: full, nbits_value: 2}\n4: full\n', 'map.yaml');
    const quantization = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { layerMap } };
    expect(plannedLayers(config, { cacheMode: 'quantized', quantization })).toEqual(['quantized', 'keys-only', 'values-only', 'quantized', 'full-precision']);
    // The lab's keys-only target on layer 0: the plan the eval runs, the strip shows the same.
    const targeted = withSideTargets(DEFAULT_QUANTIZED_CACHE_SETTINGS, { layers: [0], parts: 'key' }, 5);
    expect(plannedLayers(config, { cacheMode: 'quantized', quantization: targeted })).toEqual(['keys-only', ...Array(4).fill('full-precision')]);
  });

  it('names each layer\'s runtime formats where the layer map (format_key/format_value) or --kv-format sets them', () => {
    const layerMap = parseLayerMap('0: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q4_0}\n2: {format_key: vllm:fp8_e4m3, nbits_value: full}\n', 'map.yaml');
    const quantization = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { layerMap } };
    expect(plannedFormats(config, { cacheMode: 'quantized', quantization })).toEqual(['K llama.cpp:q8_0, V llama.cpp:q4_0', null, 'K vllm:fp8_e4m3', null, null]);
    expect(plannedLayers(config, { cacheMode: 'quantized', quantization })).toEqual(['quantized', 'quantized', 'keys-only', 'quantized', 'quantized']);
    const everyLayer = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { kvFormatKey: 'nvfp4', kvFormatValue: 'nvfp4' } };
    expect(plannedFormats(config, { cacheMode: 'quantized', quantization: everyLayer })).toEqual(Array(5).fill('K nvfp4, V nvfp4'));
    expect(plannedFormats(config, { cacheMode: 'dynamic', quantization: everyLayer })).toEqual(Array(5).fill(null));
  });
});
