import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from './cache-config.js';
import { kindHasKvCache } from '../config/layer-kinds.js';
import { modelConfigFromObject } from '../config/model-config.js';
import { planRunCache } from '../engine/plan-run-cache.js';
import type { RunSettings } from '../engine/types.js';
import { runPreflight } from '../preflight/run-preflight.js';
import { planCacheLayers, planDynamicLayers, type PlannedLayer } from './layer-plan.js';

/** Layers of these kinds, each with a KV cache exactly when app/config says its kind keeps one. */
function layersOf(kinds: readonly string[]): PlannedLayer[] {
  return kinds.map((actualKind) => ({ actualKind, hasKvCache: kindHasKvCache(actualKind) }));
}

describe('planCacheLayers', () => {
  // gemma-3-1b-style: sliding except every 6th layer (spec §2.4)
  const gemma3 = layersOf(Array.from({ length: 12 }, (_, i) => ((i + 1) % 6 ? 'sliding_attention' : 'full_attention')));
  // LFM2-350M-style: conv layers without KV (spec §2.5)
  const lfm2 = layersOf(['conv', 'conv', 'full_attention', 'conv', 'conv', 'full_attention']);

  it("'all' quantizes every layer with a KV cache and gives none to layers without one", () => {
    expect(planCacheLayers(layersOf(['full_attention', 'full_attention']), 'all')).toEqual(['quantized', 'quantized']);
    expect(planCacheLayers(gemma3, 'all')).toEqual(Array(12).fill('quantized'));
    expect(planCacheLayers(lfm2, 'all')).toEqual(['none', 'none', 'quantized', 'none', 'none', 'quantized']);
  });

  it("'full-attention-only' quantizes full attention and keeps sliding, chunked and hybrid layers dynamic", () => {
    expect(planCacheLayers(gemma3, 'full-attention-only')).toEqual([
      'dynamic', 'dynamic', 'dynamic', 'dynamic', 'dynamic', 'quantized',
      'dynamic', 'dynamic', 'dynamic', 'dynamic', 'dynamic', 'quantized',
    ]);
    expect(planCacheLayers(layersOf(['chunked_attention', 'chunked_attention', 'chunked_attention', 'full_attention']), 'full-attention-only'))
      .toEqual(['dynamic', 'dynamic', 'dynamic', 'quantized']);
    expect(planCacheLayers(layersOf(['linear_attention', 'hybrid', 'moe', 'mlp', 'full_attention']), 'full-attention-only'))
      .toEqual(['none', 'dynamic', 'none', 'none', 'quantized']);
  });

  it('gives no cache to a full-attention layer that reads an earlier layer\'s KV (num_kv_shared_layers)', () => {
    const layers = [...layersOf(['full_attention', 'full_attention']), { actualKind: 'full_attention', hasKvCache: false }];
    expect(planCacheLayers(layers, 'all')).toEqual(['quantized', 'quantized', 'none']);
    expect(planDynamicLayers(layers)).toEqual(['dynamic', 'dynamic', 'none']);
  });

  it('treats a layer type it does not know as attention: quantized under "all", full precision under "full-attention-only"', () => {
    const layers = layersOf(['full_attention', 'fancy_attention']);
    expect(planCacheLayers(layers, 'all')).toEqual(['quantized', 'quantized']);
    expect(planCacheLayers(layers, 'full-attention-only')).toEqual(['quantized', 'dynamic']);
  });
});

describe('the preflight reports the plan a run builds', () => {
  const config = modelConfigFromObject({
    model_type: 'llama', num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 64,
    layer_types: ['full_attention', 'fancy_attention', 'sliding_attention', 'full_attention'], sliding_window: 64,
  }, 'fancy/config.json');
  const quantization = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, layerPolicy: 'full-attention-only' as const };
  const settings = { cacheMode: 'quantized', quantization } as RunSettings;

  it('keeps an unknown layer type full precision in both, and the run starts where the preflight passes', () => {
    const preflight = runPreflight(config, quantization, { sequenceLengths: [64] });
    expect(preflight.ok).toBe(true);
    const { plan } = planRunCache(config, settings, 64);
    expect(plan).toEqual(['quantized', 'dynamic', 'dynamic', 'quantized']);
    expect(preflight.layers.map((layer) => layer.quantized)).toEqual(plan!.map((kind) => kind === 'quantized'));
  });
});
