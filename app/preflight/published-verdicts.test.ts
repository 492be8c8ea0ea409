import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import { configJson, PUBLISHED_CONFIGS } from '../config/test-support/published-configs.js';
import { runPreflight } from './run-preflight.js';

/**
 * The V5 verdict per model (spec §2.5): the set transformers' error prints, or null when
 * QuantizedCache accepts; then whether kvscope's run is possible under each layer policy.
 */
const VERDICTS: Readonly<Record<string, { readonly transformers: string | null; readonly all: boolean; readonly fullAttentionOnly: boolean }>> = {
  'google/gemma-3-1b-it': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: true },
  'google/gemma-2-2b-it': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: true },
  'openai/gpt-oss-20b': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: true },
  'microsoft/Phi-3.5-mini-instruct': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: false },
  'microsoft/Phi-4-mini-instruct': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: false },
  'bigcode/starcoder2-7b': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: false },
  'LiquidAI/LFM2-350M': { transformers: "{'conv'}", all: false, fullAttentionOnly: true },
  'Qwen/Qwen2-0.5B': { transformers: null, all: true, fullAttentionOnly: true },
  'Qwen/Qwen1.5-1.8B-Chat': { transformers: null, all: true, fullAttentionOnly: true },
  'Qwen/Qwen3-0.6B': { transformers: null, all: true, fullAttentionOnly: true },
  'meta-llama/Llama-3.2-1B-Instruct': { transformers: null, all: true, fullAttentionOnly: true },
  'mistralai/Mistral-7B-v0.3': { transformers: null, all: true, fullAttentionOnly: true },
  'mistralai/Mixtral-8x7B-v0.1': { transformers: null, all: true, fullAttentionOnly: true },
  'ai21labs/AI21-Jamba-1.5-Mini': { transformers: null, all: false, fullAttentionOnly: true },
  'mistralai/Mistral-7B-v0.1': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: false },
  'google/gemma-3-4b-it': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: true },
  'google/gemma-3n-E2B-it': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: true },
  'CohereForAI/c4ai-command-r7b-12-2024': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: true },
  'meta-llama/Llama-4-Scout-17B-16E-Instruct': { transformers: "{'chunked_attention'}", all: false, fullAttentionOnly: true },
  'allenai/Olmo-3-1025-7B': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: true },
  'LGAI-EXAONE/EXAONE-4.0-32B': { transformers: "{'sliding_attention'}", all: false, fullAttentionOnly: true },
  'Qwen/Qwen3-Next-80B-A3B-Instruct': { transformers: "{'linear_attention'}", all: false, fullAttentionOnly: true },
  'MiniMaxAI/MiniMax-Text-01-hf': { transformers: "{'linear_attention'}", all: false, fullAttentionOnly: true },
  'tiiuae/Falcon-H1 (24-layer variant)': { transformers: "{'hybrid'}", all: false, fullAttentionOnly: false },
  'nvidia/Nemotron-H-8B-Base-8K': { transformers: "{'linear_attention', 'mlp'}", all: false, fullAttentionOnly: true },
  'ibm-ai-platform/Bamba-9B': { transformers: null, all: false, fullAttentionOnly: true },
  'ibm-granite/granite-4.0-tiny-preview': { transformers: "{'attention', 'mamba'}", all: false, fullAttentionOnly: true },
  'Zyphra/Zamba-7B-v1': { transformers: "{'hybrid', 'linear_attention'}", all: false, fullAttentionOnly: false },
};

const VERBATIM_PREFIX = '`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: ';

describe('preflight verdicts for published configs (spec §2.5)', () => {
  it('covers every fixture', () => {
    expect(PUBLISHED_CONFIGS.map((published) => published.id).sort()).toEqual(Object.keys(VERDICTS).sort());
  });

  for (const published of PUBLISHED_CONFIGS) {
    const verdict = VERDICTS[published.id]!;
    it(`${published.id}: transformers ${verdict.transformers === null ? 'accepts' : `raises ${verdict.transformers}`}`, () => {
      const config = parseModelConfig(configJson(published), `${published.id}/config.json`);
      const all = runPreflight(config, DEFAULT_QUANTIZED_CACHE_SETTINGS);
      const first = all.diagnostics[0];
      if (verdict.transformers === null) {
        expect(all.diagnostics.some((d) => d.code === 'unsupported-layer-types')).toBe(false);
      } else {
        // The first diagnostic is the one transformers raises.
        expect(first?.code).toBe('unsupported-layer-types');
        expect(first?.message.split('\n')[0]).toBe(VERBATIM_PREFIX + verdict.transformers);
      }
      expect(all.ok).toBe(verdict.all);
      expect(all.layerTypes).toEqual(config.layers.layerTypes);
      expect(all.layers).toHaveLength(config.layers.numLayers);

      const fullOnly = runPreflight(config, { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, layerPolicy: 'full-attention-only' });
      expect(fullOnly.ok).toBe(verdict.fullAttentionOnly);
      expect(fullOnly.diagnostics.some((d) => d.code === 'unsupported-layer-types')).toBe(false);
      expect(fullOnly.layers.every((layer) => !layer.quantized || layer.actualKind === 'full_attention')).toBe(true);
    });
  }
});
