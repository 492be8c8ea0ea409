import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import type { ModelConfig } from '../config/model-config.js';
import { modelConfigFromObject } from '../config/model-config.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import { GEMMA_3_1B_IT, PHI_3_5_MINI_INSTRUCT } from '../config/test-support/dense-model-configs.js';
import { AI21_JAMBA_1_5_MINI, LFM2_350M, NEMOTRON_H_8B } from '../config/test-support/hybrid-model-configs.js';
import { GEMMA_3N_E2B_IT } from '../config/test-support/multimodal-model-configs.js';
import type { PublishedConfig } from '../config/test-support/published-config.js';
import { configJson } from '../config/test-support/published-configs.js';
import { sharedDir } from '../node/golden.js';
import type { Diagnostic } from './diagnostic.js';
import { runPreflight } from './run-preflight.js';

const STORIES = parseModelConfig(readFileSync(resolve(sharedDir(), 'models', 'stories260k', 'config.json'), 'utf8'), 'stories260k/config.json');
const LLAMA_LIKE = modelConfigFromObject({ model_type: 'llama', num_hidden_layers: 2, num_attention_heads: 8, num_key_value_heads: 8, head_dim: 128 }, 'llama/config.json');

function load(published: PublishedConfig): ModelConfig {
  return parseModelConfig(configJson(published), `${published.id}/config.json`);
}

function settings(overrides: Partial<QuantizedCacheSettings>): QuantizedCacheSettings {
  return { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, ...overrides };
}

function firstLine(diagnostic: Diagnostic | undefined): string {
  return diagnostic?.message.split('\n')[0] ?? '';
}

function codes(diagnostics: readonly Diagnostic[]): string[] {
  return diagnostics.map((diagnostic) => diagnostic.code);
}

describe('runPreflight: stories260k (the real tiny model)', () => {
  it('passes with transformers defaults; odd prompt lengths are flagged as a warning only', () => {
    const result = runPreflight(STORIES, DEFAULT_QUANTIZED_CACHE_SETTINGS);
    expect(result.ok).toBe(true);
    expect(result.layerTypes).toEqual(Array(5).fill('full_attention'));
    expect(result.layers.every((layer) => layer.quantized && layer.hasKvCache && layer.actualKind === 'full_attention')).toBe(true);
    expect(codes(result.diagnostics)).toEqual(['quanto-group-size-divisor']);
    const [warning] = result.diagnostics;
    expect(warning?.severity).toBe('warning');
    // H·S·D = 4·S·8 = 32·S, so g = 64 needs an even S (spec §3.1 step 1).
    expect(firstLine(warning)).toBe('Group size (64) must be a divisor of (96)');
    expect(warning?.message).toContain('every quantized length must be a multiple of 2 tokens');
    expect(warning?.fix).toContain('use q_group_size 1, 2, 4, 8, 16, 32 (works for every length)');
    expect(warning?.layers).toEqual([0, 1, 2, 3, 4]);
  });

  it('passes cleanly with q_group_size 32 and a prompt of 37 tokens', () => {
    const result = runPreflight(STORIES, settings({ groupSize: 32 }), { sequenceLengths: [37] });
    expect(result.ok).toBe(true);
    expect(result.diagnostics).toEqual([]);
  });

  it('errors for a given odd prompt length, with the concrete numbers', () => {
    const result = runPreflight(STORIES, DEFAULT_QUANTIZED_CACHE_SETTINGS, { sequenceLengths: [8, 37] });
    expect(result.ok).toBe(false);
    const [error] = result.diagnostics;
    expect(error).toMatchObject({ code: 'quanto-group-size-divisor', severity: 'error', origin: 'backend' });
    expect(firstLine(error)).toBe('Group size (64) must be a divisor of (1184)');
    expect(error?.message).toContain('Prompt lengths that fail at prefill: 37 (H·S·D = 4·37·8 = 1184)');
    expect(error?.fix).toBe('Pad the prompt to a multiple of 2 tokens, or use q_group_size 1, 2, 4, 8, 16, 32 (these work for all the given lengths).');
  });
});

describe('runPreflight: quanto axis -1 divisibility (B·H·S must be a multiple of g)', () => {
  const axisMinusOne = settings({ axisKey: -1, axisValue: -1 });

  it('without prompt lengths: S must be a multiple of g / gcd(g, B·H)', () => {
    const result = runPreflight(STORIES, axisMinusOne);
    const divisor = result.diagnostics.find((d) => d.code === 'quanto-group-size-divisor');
    expect(firstLine(divisor)).toBe('Group size (64) must be a divisor of (68)');
    expect(divisor?.message).toContain('B·H·S token rows per channel (1·4·S)');
    expect(divisor?.message).toContain('multiple of 16 tokens');
    expect(divisor?.fix).toContain('use q_group_size 1, 2, 4 (works for every length)');
  });

  it('separates prompts larger than nothing, prompts that fail at prefill, and prompts that fail at a flush', () => {
    const result = runPreflight(STORIES, settings({ axisKey: -1, axisValue: -1, residualLength: 100 }), { sequenceLengths: [1, 16, 37, 64] });
    expect(result.ok).toBe(false);
    const larger = result.diagnostics.find((d) => d.code === 'group-larger-than-tensor');
    expect(larger).toMatchObject({ severity: 'error' });
    expect(firstLine(larger)).toBe('Group size (64) must be a divisor of (4)');
    const prefill = result.diagnostics.find((d) => d.code === 'quanto-group-size-divisor' && d.severity === 'error');
    expect(prefill?.message).toContain('Prompt lengths that fail at prefill: 37 (B·H·S = 1·4·37 = 148)');
    const flush = result.diagnostics.find((d) => d.code === 'quanto-group-size-divisor' && d.severity === 'warning');
    expect(firstLine(flush)).toBe('Group size (64) must be a divisor of (464)');
    expect(flush?.message).toContain('16 (at decode step 100, B·H·S = 1·4·116 = 464), 64 (at decode step 100, B·H·S = 1·4·164 = 656)');
    expect(flush?.fix).toContain('Use a residual_length that is a multiple of 16');
  });

  it('counts the batch: B = 4 makes S a multiple of 4', () => {
    const result = runPreflight(STORIES, axisMinusOne, { batch: 4, sequenceLengths: [20, 22] });
    const error = result.diagnostics.find((d) => d.severity === 'error');
    expect(firstLine(error)).toBe('Group size (64) must be a divisor of (352)');
    expect(error?.message).toContain('22 (B·H·S = 4·4·22 = 352)');
    expect(error?.message).not.toContain(' 20 (');
  });

  it('reports keys and values separately when their axes differ', () => {
    const result = runPreflight(STORIES, settings({ axisKey: -1, axisValue: 0 }), { sequenceLengths: [37] });
    const messages = result.diagnostics.filter((d) => d.severity === 'error').map((d) => d.message);
    expect(messages[0]).toContain('quantizes the keys as B·H·S');
    expect(messages[1]).toContain('quantizes the values as H·S·D');
  });
});

describe('runPreflight: HQQ', () => {
  const hqq = settings({ backend: 'hqq', axisKey: 1, axisValue: 1 });

  it('needs N divisible by g and, on axis 1, N/g rows that fill the 4-bit planes', () => {
    const result = runPreflight(STORIES, hqq, { sequenceLengths: [1, 2, 3, 4, 6, 8] });
    expect(firstLine(result.diagnostics.find((d) => d.code === 'group-larger-than-tensor')))
      .toBe('group_size should be divisble by the total tensor dimensions. shape: torch.Size([1, 4, 1, 8]), group_size: 64');
    expect(firstLine(result.diagnostics.find((d) => d.code === 'hqq-group-size-divisor')))
      .toBe('group_size should be divisble by the total tensor dimensions. shape: torch.Size([1, 4, 3, 8]), group_size: 64');
    const packing = result.diagnostics.find((d) => d.code === 'hqq-bitpack-rows');
    expect(packing?.message).toContain('needs the N/g = 64/64 = 1 rows of codes to be a multiple of 2');
    expect(packing?.message).toContain('Prompt lengths that fail at prefill: 2 (N/g = 1), 6 (N/g = 3)');
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toHaveLength(3);
  });

  it('refuses 3-bit with axis 1, and odd group sizes for 4-bit packing on axis 0', () => {
    expect(codes(runPreflight(LLAMA_LIKE, settings({ backend: 'hqq', nbits: 3, axisKey: 1, axisValue: 0 })).diagnostics)).toContain('hqq-3bit-axis-1');
    const odd = runPreflight(LLAMA_LIKE, settings({ backend: 'hqq', groupSize: 63 }));
    expect(odd.diagnostics.find((d) => d.code === 'hqq-bitpack-group-size')?.message).toContain('g = 63 rows; 4-bit packing needs them to be a multiple of 2');
  });

  it('gives the docs’ axis recommendation: 1 for hqq, noting the 0/0 defaults', () => {
    const advice = runPreflight(LLAMA_LIKE, settings({ backend: 'hqq' })).diagnostics.find((d) => d.code === 'axis-recommendation');
    expect(advice).toMatchObject({ severity: 'info' });
    expect(advice?.message).toContain('recommend axis_key = axis_value = 1 for the hqq backend; this run sets axis_key and axis_value otherwise');
    expect(runPreflight(LLAMA_LIKE, hqq).diagnostics.some((d) => d.code === 'axis-recommendation')).toBe(false);
  });
});

describe('runPreflight: transformers’ checks, messages and order (spec §1.2)', () => {
  it('refuses "HQQ" (case-sensitive) and suggests "hqq"', () => {
    const [first] = runPreflight(LLAMA_LIKE, settings({ backend: 'HQQ' })).diagnostics;
    expect(first).toMatchObject({ code: 'unknown-backend', severity: 'error', origin: 'transformers', fix: 'Use "hqq".' });
    expect(firstLine(first)).toBe('Unknown quantization backend `HQQ`');
    expect(runPreflight(LLAMA_LIKE, settings({ backend: 'int4' })).diagnostics[0]?.fix).toBe('Use "quanto" (the default) or "hqq".');
  });

  it('puts the backend error before the layer-type error, and runs no backend-specific check', () => {
    const result = runPreflight(load(GEMMA_3_1B_IT), settings({ backend: 'HQQ', nbits: 5 }));
    expect(codes(result.diagnostics)).toEqual(['unknown-backend', 'unsupported-layer-types']);
  });

  it('orders layer types → nbits → axis_key → axis_value, with the exact texts', () => {
    const result = runPreflight(load(GEMMA_3_1B_IT), settings({ nbits: 3, axisKey: 1, axisValue: 2 }));
    expect(codes(result.diagnostics).slice(0, 4)).toEqual(['unsupported-layer-types', 'invalid-nbits', 'invalid-axis-key', 'invalid-axis-value']);
    expect(result.diagnostics.slice(1, 4).map(firstLine)).toEqual([
      '`nbits` for `quanto` backend has to be one of [`2`, `4`] but got 3',
      '`axis_key` for `quanto` backend has to be one of [`0`, `-1`] but got 1',
      '`axis_value` for `quanto` backend has to be one of [`0`, `-1`] but got 2',
    ]);
  });

  it('makes the nbits error first when the layer types pass', () => {
    const result = runPreflight(LLAMA_LIKE, settings({ backend: 'hqq', nbits: 5, axisKey: -1 }));
    expect(result.diagnostics.map(firstLine).slice(0, 2)).toEqual([
      '`nbits` for `HQQ` backend has to be one of [`1`, `2`, `3`, `4`, `8`] but got 5',
      '`axis_key` for `HQQ` backend has to be one of [`0`, `1`] but got -1',
    ]);
  });

  it('lists kvscope-only errors after the errors transformers raises', () => {
    expect(codes(runPreflight(load(GEMMA_3_1B_IT), settings({ backend: 'HQQ', groupSize: 0 })).diagnostics))
      .toEqual(['unknown-backend', 'unsupported-layer-types', 'invalid-group-size']);
    expect(codes(runPreflight(LLAMA_LIKE, settings({ nbits: 3, groupSize: 0, residualLength: 0 })).diagnostics))
      .toEqual(['invalid-nbits', 'invalid-group-size', 'residual-flushes-every-second-step']);
  });

  it('gives the layer-type error with the set, the layers and a fix', () => {
    const [error] = runPreflight(load(GEMMA_3_1B_IT), DEFAULT_QUANTIZED_CACHE_SETTINGS).diagnostics;
    expect(firstLine(error)).toBe(
      "`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: {'sliding_attention'}",
    );
    expect(error?.message).toContain('Invalid: sliding_attention at 0-4, 6-10, 12-16, 18-22, 24-25; full_attention: 5, 11, 17, 23.');
    expect(error?.layers).toHaveLength(22);
    expect(error?.fix).toContain('Use layer policy "full-attention-only" to quantize only the full-attention layers (5, 11, 17, 23)');
  });

  it('sorts several invalid types and says Python’s order is hash-dependent', () => {
    const [error] = runPreflight(load(NEMOTRON_H_8B), DEFAULT_QUANTIZED_CACHE_SETTINGS).diagnostics;
    expect(firstLine(error)).toMatch(/invalid layer types: \{'linear_attention', 'mlp'\}$/);
    expect(error?.message).toContain('PYTHONHASHSEED');
  });

  it('tells a model with no full-attention layer to use a dynamic cache', () => {
    expect(runPreflight(load(PHI_3_5_MINI_INSTRUCT), DEFAULT_QUANTIZED_CACHE_SETTINGS).diagnostics[0]?.fix)
      .toBe('This model has no full-attention layer to quantize: use an unquantized dynamic cache.');
  });
});

describe('runPreflight: layer policy full-attention-only', () => {
  it('quantizes the full-attention layers and lists the others (LFM2-350M)', () => {
    const result = runPreflight(load(LFM2_350M), settings({ layerPolicy: 'full-attention-only' }));
    expect(result.ok).toBe(true);
    expect(result.layers.filter((layer) => layer.quantized).map((layer) => layer.index)).toEqual([2, 5, 8, 10, 12, 14]);
    const info = result.diagnostics.find((d) => d.code === 'layers-kept-full-precision');
    expect(info?.severity).toBe('info');
    expect(info?.message).toContain('quantizes 6 of 16 layers (2, 5, 8, 10, 12, 14); no KV cache at all: conv at 0-1, 3-4, 6-7, 9, 11, 13, 15');
  });

  it('keeps sliding layers in full precision and names the shared-KV tail (gemma-3n)', () => {
    const result = runPreflight(load(GEMMA_3N_E2B_IT), settings({ layerPolicy: 'full-attention-only' }));
    expect(result.ok).toBe(true);
    expect(result.layers.filter((layer) => layer.quantized).map((layer) => layer.index)).toEqual([4, 9, 14, 19]);
    const info = result.diagnostics.find((d) => d.code === 'layers-kept-full-precision');
    expect(info?.message).toContain('kept in full precision (dynamic cache): sliding_attention at 0-3, 5-8, 10-13, 15-18');
    expect(info?.message).toContain("reading an earlier layer's KV cache (num_kv_shared_layers): 20-29");
  });

  it('errors when no layer is full attention (Phi-3.5: all sliding)', () => {
    const result = runPreflight(load(PHI_3_5_MINI_INSTRUCT), settings({ layerPolicy: 'full-attention-only' }));
    expect(result.ok).toBe(false);
    expect(result.diagnostics[0]).toMatchObject({ code: 'no-quantizable-layers', severity: 'error', fix: 'Use an unquantized dynamic cache for this model.' });
  });
});

describe('runPreflight: what transformers misses', () => {
  it('Jamba passes transformers’ check, but its mamba layers have no KV cache', () => {
    const jamba = load(AI21_JAMBA_1_5_MINI);
    const all = runPreflight(jamba, DEFAULT_QUANTIZED_CACHE_SETTINGS);
    expect(all.ok).toBe(false);
    expect(all.layerTypes).toEqual(Array(32).fill('full_attention'));
    const [error] = all.diagnostics;
    expect(error).toMatchObject({ code: 'layers-without-kv-cache', origin: 'kvscope' });
    expect(error?.layers).toHaveLength(28);
    expect(error?.fix).toBe('Use layer policy "full-attention-only" to quantize only the attention layers (4, 12, 20, 28).');
    const fao = runPreflight(jamba, settings({ layerPolicy: 'full-attention-only' }));
    expect(fao.ok).toBe(true);
    expect(fao.layers.filter((layer) => layer.quantized).map((layer) => layer.index)).toEqual([4, 12, 20, 28]);
  });

  it('warns that residual lengths 0 and 1 flush every 2nd step, and refuses fractions', () => {
    for (const residualLength of [0, 1, -3]) {
      const result = runPreflight(LLAMA_LIKE, settings({ residualLength }));
      expect(result.ok).toBe(true);
      expect(result.diagnostics.find((d) => d.code === 'residual-flushes-every-second-step')?.message).toContain(`residual_length ${residualLength}: transformers accepts it`);
    }
    expect(runPreflight(LLAMA_LIKE, settings({ residualLength: 2 })).diagnostics).toEqual([]);
    expect(runPreflight(LLAMA_LIKE, settings({ residualLength: 2.5 })).diagnostics[0]?.code).toBe('invalid-residual-length');
  });

  it('refuses a group size that is not a positive integer', () => {
    for (const groupSize of [0, -64, 12.5]) {
      const [first] = runPreflight(LLAMA_LIKE, settings({ groupSize })).diagnostics;
      expect(first).toMatchObject({ code: 'invalid-group-size', severity: 'error' });
    }
  });

  it('notes sliding windows that cover the whole context (Phi-3.5: 262144 ≥ 131072)', () => {
    const info = runPreflight(load(PHI_3_5_MINI_INSTRUCT), DEFAULT_QUANTIZED_CACHE_SETTINGS).diagnostics.find((d) => d.code === 'sliding-window-covers-context');
    expect(info?.message).toContain('sliding_window 262144 is at least max_position_embeddings 131072');
    expect(info?.layers).toHaveLength(32);
  });

  it('turns bad options into diagnostics', () => {
    const result = runPreflight(LLAMA_LIKE, DEFAULT_QUANTIZED_CACHE_SETTINGS, { batch: 0, sequenceLengths: [0, 3.5, 16] });
    expect(codes(result.diagnostics)).toEqual(['invalid-batch', 'invalid-sequence-length']);
    expect(result.diagnostics[1]?.message).toBe('prompt lengths must be positive integers; got 0, 3.5.');
  });
});
