import { describe, expect, it } from 'vitest';
import { pythonSetRepr } from '../python-repr.js';
import { parseModelConfig } from './parse-model-config.js';
import { configJson, PUBLISHED_CONFIGS } from './test-support/published-configs.js';

/** `start, start + step, …` below `end`. */
function every(step: number, start: number, end: number): number[] {
  const out: number[] = [];
  for (let i = start; i < end; i += step) out.push(i);
  return out;
}

interface Expected {
  /** num_hidden_layers */
  readonly layers: number;
  /** full_attention indices in the list QuantizedCache validates */
  readonly full: readonly number[];
  /** the set transformers' error prints (empty: QuantizedCache accepts) */
  readonly invalid: string;
  /** length of the validated list when num_kv_shared_layers truncates it */
  readonly validated?: number;
  /** layers that really keep a KV cache, when transformers' list misdescribes them */
  readonly kvLayers?: readonly number[];
  readonly headDim: number;
  readonly kvHeads: number;
}

const ALL = (n: number): number[] => every(1, 0, n);

/** Spec §2.5 (the 14 listed models) and §2.4 (the other families). */
const EXPECTED: Readonly<Record<string, Expected>> = {
  'google/gemma-3-1b-it': { layers: 26, full: [5, 11, 17, 23], invalid: "{'sliding_attention'}", headDim: 256, kvHeads: 1 },
  'google/gemma-2-2b-it': { layers: 26, full: every(2, 1, 26), invalid: "{'sliding_attention'}", headDim: 256, kvHeads: 4 },
  'openai/gpt-oss-20b': { layers: 24, full: every(2, 1, 24), invalid: "{'sliding_attention'}", headDim: 64, kvHeads: 8 },
  'microsoft/Phi-3.5-mini-instruct': { layers: 32, full: [], invalid: "{'sliding_attention'}", headDim: 96, kvHeads: 32 },
  'microsoft/Phi-4-mini-instruct': { layers: 32, full: [], invalid: "{'sliding_attention'}", headDim: 128, kvHeads: 8 },
  'bigcode/starcoder2-7b': { layers: 32, full: [], invalid: "{'sliding_attention'}", headDim: 128, kvHeads: 4 },
  'LiquidAI/LFM2-350M': { layers: 16, full: [2, 5, 8, 10, 12, 14], invalid: "{'conv'}", kvLayers: [2, 5, 8, 10, 12, 14], headDim: 64, kvHeads: 8 },
  'Qwen/Qwen2-0.5B': { layers: 24, full: ALL(24), invalid: 'set()', headDim: 64, kvHeads: 2 },
  'Qwen/Qwen1.5-1.8B-Chat': { layers: 24, full: ALL(24), invalid: 'set()', headDim: 128, kvHeads: 16 },
  'Qwen/Qwen3-0.6B': { layers: 28, full: ALL(28), invalid: 'set()', headDim: 128, kvHeads: 8 },
  'meta-llama/Llama-3.2-1B-Instruct': { layers: 16, full: ALL(16), invalid: 'set()', headDim: 64, kvHeads: 8 },
  'mistralai/Mistral-7B-v0.3': { layers: 32, full: ALL(32), invalid: 'set()', headDim: 128, kvHeads: 8 },
  'mistralai/Mixtral-8x7B-v0.1': { layers: 32, full: ALL(32), invalid: 'set()', headDim: 128, kvHeads: 8 },
  'ai21labs/AI21-Jamba-1.5-Mini': { layers: 32, full: ALL(32), invalid: 'set()', kvLayers: [4, 12, 20, 28], headDim: 128, kvHeads: 8 },
  'mistralai/Mistral-7B-v0.1': { layers: 32, full: [], invalid: "{'sliding_attention'}", headDim: 128, kvHeads: 8 },
  'google/gemma-3-4b-it': { layers: 34, full: [5, 11, 17, 23, 29], invalid: "{'sliding_attention'}", headDim: 256, kvHeads: 4 },
  'google/gemma-3n-E2B-it': { layers: 30, validated: 20, full: [4, 9, 14, 19], invalid: "{'sliding_attention'}", kvLayers: ALL(20), headDim: 256, kvHeads: 2 },
  'CohereForAI/c4ai-command-r7b-12-2024': { layers: 32, full: every(4, 3, 32), invalid: "{'sliding_attention'}", headDim: 128, kvHeads: 8 },
  'meta-llama/Llama-4-Scout-17B-16E-Instruct': { layers: 48, full: every(4, 3, 48), invalid: "{'chunked_attention'}", headDim: 128, kvHeads: 8 },
  'allenai/Olmo-3-1025-7B': { layers: 32, full: every(4, 3, 32), invalid: "{'sliding_attention'}", headDim: 128, kvHeads: 32 },
  'LGAI-EXAONE/EXAONE-4.0-32B': { layers: 64, full: every(4, 3, 64), invalid: "{'sliding_attention'}", headDim: 128, kvHeads: 8 },
  'Qwen/Qwen3-Next-80B-A3B-Instruct': { layers: 48, full: every(4, 3, 48), invalid: "{'linear_attention'}", kvLayers: every(4, 3, 48), headDim: 256, kvHeads: 2 },
  'MiniMaxAI/MiniMax-Text-01-hf': { layers: 80, full: every(8, 7, 80), invalid: "{'linear_attention'}", kvLayers: every(8, 7, 80), headDim: 128, kvHeads: 8 },
  'tiiuae/Falcon-H1 (24-layer variant)': { layers: 24, full: [], invalid: "{'hybrid'}", headDim: 128, kvHeads: 2 },
  'nvidia/Nemotron-H-8B-Base-8K': { layers: 52, full: [7, 18, 29, 40], invalid: "{'linear_attention', 'mlp'}", kvLayers: [7, 18, 29, 40], headDim: 128, kvHeads: 8 },
  'ibm-ai-platform/Bamba-9B': { layers: 32, full: ALL(32), invalid: 'set()', kvLayers: [9, 18, 27], headDim: 128, kvHeads: 8 },
  'ibm-granite/granite-4.0-tiny-preview': { layers: 40, full: [], invalid: "{'attention', 'mamba'}", kvLayers: [5, 15, 25, 35], headDim: 128, kvHeads: 4 },
  'Zyphra/Zamba-7B-v1': { layers: 76, full: [], invalid: "{'hybrid', 'linear_attention'}", kvLayers: [2, ...every(6, 7, 76)], headDim: 464, kvHeads: 16 },
};

describe('published configs: derived layer types and V5 QuantizedCache verdicts (spec §2.4, §2.5)', () => {
  it('has an expectation for every fixture and a fixture for every expectation', () => {
    expect(PUBLISHED_CONFIGS.map((published) => published.id).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const published of PUBLISHED_CONFIGS) {
    const expected = EXPECTED[published.id] as Expected;
    it(`${published.id}: full attention at [${expected.full.length > 8 ? `${expected.full.length} layers` : expected.full.join(', ')}], invalid ${expected.invalid}`, () => {
      const config = parseModelConfig(configJson(published), `${published.id}/config.json`);
      const { layerTypes, numLayers, layers } = config.layers;
      expect(numLayers).toBe(expected.layers);
      expect(layerTypes).toHaveLength(expected.validated ?? expected.layers);
      expect(layerTypes.flatMap((type, index) => (type === 'full_attention' ? [index] : []))).toEqual(expected.full);
      expect(pythonSetRepr(layerTypes.filter((type) => type !== 'full_attention'))).toBe(expected.invalid);
      expect(layers.filter((layer) => layer.hasKvCache).map((layer) => layer.index)).toEqual(expected.kvLayers ?? ALL(expected.layers));
      expect(config.geometry.headDim).toBe(expected.headDim);
      expect(config.geometry.numKeyValueHeads).toBe(expected.kvHeads);
    });
  }

  it('gemma-3n-E2B: the shared tail (20-29) is dropped from validation but still counted as layers', () => {
    const published = PUBLISHED_CONFIGS.find((entry) => entry.id === 'google/gemma-3n-E2B-it');
    const config = parseModelConfig(configJson(published!), 'gemma-3n/config.json');
    expect(config.geometry.kvSharedLayers).toEqual(every(1, 20, 30));
    expect(config.layers.allLayerTypes.flatMap((type, index) => (type === 'full_attention' ? [index] : []))).toEqual([4, 9, 14, 19, 24, 29]);
  });
});
