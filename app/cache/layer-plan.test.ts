import { describe, expect, it } from 'vitest';
import { CacheError } from '../errors.js';
import { planCacheLayers } from './layer-plan.js';

describe('planCacheLayers', () => {
  // gemma-3-1b-style: sliding except every 6th layer (spec §2.4)
  const gemma3 = Array.from({ length: 12 }, (_, i) => ((i + 1) % 6 ? 'sliding_attention' : 'full_attention'));
  // LFM2-350M-style: conv layers without KV (spec §2.5)
  const lfm2 = ['conv', 'conv', 'full_attention', 'conv', 'conv', 'full_attention'];

  it("'all' quantizes every layer with a KV cache and gives none to layers without one", () => {
    expect(planCacheLayers(['full_attention', 'full_attention'], 'all')).toEqual(['quantized', 'quantized']);
    expect(planCacheLayers(gemma3, 'all')).toEqual(Array(12).fill('quantized'));
    expect(planCacheLayers(lfm2, 'all')).toEqual(['none', 'none', 'quantized', 'none', 'none', 'quantized']);
  });

  it("'full-attention-only' quantizes full attention and keeps sliding, chunked and hybrid layers dynamic", () => {
    expect(planCacheLayers(gemma3, 'full-attention-only')).toEqual([
      'dynamic', 'dynamic', 'dynamic', 'dynamic', 'dynamic', 'quantized',
      'dynamic', 'dynamic', 'dynamic', 'dynamic', 'dynamic', 'quantized',
    ]);
    expect(planCacheLayers(['chunked_attention', 'chunked_attention', 'chunked_attention', 'full_attention'], 'full-attention-only'))
      .toEqual(['dynamic', 'dynamic', 'dynamic', 'quantized']);
    expect(planCacheLayers(['linear_attention', 'hybrid', 'moe', 'mlp', 'full_attention'], 'full-attention-only'))
      .toEqual(['none', 'dynamic', 'none', 'none', 'quantized']);
  });

  it('reads the legacy remote-code names: "attention" is full attention, "mamba" has no KV cache', () => {
    expect(planCacheLayers(['mamba', 'attention', 'mamba'], 'full-attention-only')).toEqual(['none', 'quantized', 'none']);
  });

  it('refuses an unknown layer type, naming the layer and the known types', () => {
    expect(() => planCacheLayers(['full_attention', 'fancy_attention'], 'all')).toThrow(CacheError);
    expect(() => planCacheLayers(['full_attention', 'fancy_attention'], 'all')).toThrow(/layer 1 has layer type "fancy_attention".*full_attention, attention, sliding_attention/);
  });
});
