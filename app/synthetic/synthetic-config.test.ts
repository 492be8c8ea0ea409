import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import { runPreflight } from '../preflight/run-preflight.js';
import { buildSyntheticModelJsonFiles } from './synthetic-model.js';
import { SYNTHETIC_FORMAT_VERSION, type SyntheticModelKind } from './synthetic-spec.js';

function fileText(kind: SyntheticModelKind, path: string): string {
  const file = buildSyntheticModelJsonFiles(kind).files.find((candidate) => candidate.path === path);
  if (file === undefined || typeof file.content !== 'string') throw new Error(`no text file ${path}`);
  return file.content;
}

describe('synthetic config.json', () => {
  it('describes the Llama geometry of generation-speed.md', () => {
    const config = JSON.parse(fileText('synthetic', 'config.json')) as Record<string, unknown>;
    expect(config).toMatchObject({
      model_type: 'llama',
      num_hidden_layers: 8,
      hidden_size: 512,
      intermediate_size: 1376,
      num_attention_heads: 8,
      num_key_value_heads: 4,
      head_dim: 64,
      vocab_size: 512,
      max_position_embeddings: 4096,
      rope_theta: 10000,
      rms_norm_eps: 1e-5,
      bos_token_id: 1,
      eos_token_id: 2,
      tie_word_embeddings: false,
    });
    expect(config).not.toHaveProperty('layer_types');
    const synthetic = config['kvscope_synthetic'] as Record<string, unknown>;
    expect(synthetic).toMatchObject({ kind: 'synthetic', format_version: SYNTHETIC_FORMAT_VERSION, outlier_key_scale: 10 });
    expect(typeof synthetic['seed']).toBe('number');
    expect(typeof synthetic['description']).toBe('string');
    expect(synthetic['outlier_key_channels']).toHaveLength(8);
  });

  it('gives generation_config.json the same bos and eos', () => {
    expect(JSON.parse(fileText('synthetic', 'generation_config.json'))).toMatchObject({ bos_token_id: 1, eos_token_id: 2 });
  });

  it('passes preflight as a plain Llama', () => {
    const config = parseModelConfig(fileText('synthetic', 'config.json'), 'synthetic/config.json');
    const result = runPreflight(config, DEFAULT_QUANTIZED_CACHE_SETTINGS);
    expect(result.ok, JSON.stringify(result.diagnostics)).toBe(true);
    expect(result.layerTypes).toEqual(Array(8).fill('full_attention'));
  });

  it("makes the hybrid refused under transformers' policy and accepted with full-attention-only", () => {
    const config = parseModelConfig(fileText('synthetic-hybrid', 'config.json'), 'synthetic-hybrid/config.json');
    const refused = runPreflight(config, DEFAULT_QUANTIZED_CACHE_SETTINGS);
    expect(refused.ok).toBe(false);
    expect(refused.diagnostics.filter((diagnostic) => diagnostic.severity === 'error').map((diagnostic) => diagnostic.code))
      .toEqual(['unsupported-layer-types']);
    expect(refused.layerTypes.filter((type) => type === 'sliding_attention')).toHaveLength(4);

    const accepted = runPreflight(config, { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, layerPolicy: 'full-attention-only' });
    expect(accepted.ok, JSON.stringify(accepted.diagnostics)).toBe(true);
  });
});
