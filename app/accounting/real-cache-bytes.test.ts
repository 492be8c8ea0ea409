import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import type { CacheExtensions } from '../cache/cache-extensions.js';
import { KvCache } from '../cache/kv-cache.js';
import { parseLayerMap } from '../cache/layer-map.js';
import { sumLayerMemory, type LayerMemory } from '../cache/layer-memory.js';
import { planCacheLayers } from '../cache/layer-plan.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import { RUNTIME_FORMAT_NAMES, runtimeFormat } from '../quant/runtime-formats/registry.js';
import { quantizerFor } from '../quant/registry.js';
import { kvTensor, type KvDtype } from '../tensor/kv-tensor.js';
import { estimateKvMemory } from './memory-what-if.js';
import { whatIfVerdict } from './what-if-verdict.js';

/**
 * The what-if's arithmetic against the bytes a real cache holds (issue 26 point 4, issue 25 point 7):
 * a KvCache of a small geometry (3 layers, 2 KV heads, head_dim 64) is filled with a prefill and then
 * one token per step to N tokens, and every layer's memory() (stored bytes: codes, scales and zeros,
 * residual, extensions; kvscope's working buffers aside) must equal the estimate exactly. A setting
 * the cache refuses must be refused by the estimate too, never sized.
 */
const config = parseModelConfig(JSON.stringify({
  model_type: 'llama', num_hidden_layers: 3, num_attention_heads: 4, num_key_value_heads: 2, hidden_size: 256, head_dim: 64, vocab_size: 256,
}), 'config.json');
const KV_HEADS = 2;
const HEAD_DIM = 64;

function storedBytes(memory: LayerMemory): Omit<LayerMemory, 'workingBytes'> {
  const { workingBytes: _working, ...stored } = memory;
  return stored;
}

function tensor(seq: number, seed: number, dtype: KvDtype) {
  const data = Float32Array.from({ length: KV_HEADS * seq * HEAD_DIM }, (_, i) => 2 * Math.sin(i * 0.37 + seed) + Math.cos(i * 1.3 - seed));
  // float16: values exactly representable in it, as a float16 graph returns them
  return kvTensor([1, KV_HEADS, seq, HEAD_DIM], dtype, dtype === 'float16' ? data.map((v) => Math.round(v * 256) / 256) : data);
}

/** Fills a real cache to `tokens` (prefill of `prompt`, then one token a step); its layers' memory, or what it threw. */
function realCache(settings: QuantizedCacheSettings, dtype: KvDtype, prompt: number, tokens: number): { layers: (LayerMemory | null)[] } | { error: string } {
  const plan = planCacheLayers(config.layers.layers, settings.layerPolicy, settings);
  let cache: KvCache | undefined;
  try {
    cache = new KvCache({ plan, settings, quantizer: quantizerFor(settings.backend as 'quanto' | 'hqq') });
    for (let layer = 0; layer < plan.length; layer++) cache.update(layer, tensor(prompt, layer, dtype), tensor(prompt, -layer, dtype));
    for (let step = 1; prompt + step <= tokens; step++) {
      for (let layer = 0; layer < plan.length; layer++) cache.update(layer, tensor(1, step * 7 + layer, dtype), tensor(1, -step * 7 - layer, dtype));
    }
    return { layers: plan.map((_, layer) => cache!.layer(layer)?.memory() ?? null) };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    cache?.dispose();
  }
}

function expectSameBytes(settings: QuantizedCacheSettings, dtype: KvDtype, prompt: number, tokens: number): 'sized' | 'refused' {
  const what = `${JSON.stringify(settings)} ${dtype}, ${prompt} + ${tokens - prompt} tokens`;
  const real = realCache(settings, dtype, prompt, tokens);
  const estimate = estimateKvMemory({ config, kvDtype: dtype, cacheMode: 'quantized', settings, promptTokens: prompt, contextLength: tokens });
  // the what-if refuses where a row's layout is refused at N, or (its verdict) where the prefill or a flush before N is
  const verdict = whatIfVerdict({ config, cacheMode: 'quantized', settings, promptTokens: prompt, contextLength: tokens });
  const refusals = [...estimate.rows.flatMap((row) => (row.error !== null ? [row.error] : [])), ...verdict.errors];
  if ('error' in real) {
    expect(refusals.length, `${what}: the cache refused (${real.error}) but the what-if sized it`).toBeGreaterThan(0);
    return 'refused';
  }
  expect(refusals, what).toEqual([]);
  for (const row of estimate.rows) {
    for (const layer of row.layers) expect(storedBytes(row.perLayer!), `${what}, layer ${layer}`).toEqual(storedBytes(real.layers[layer]!));
  }
  expect(storedBytes(estimate.total), what).toEqual(storedBytes(sumLayerMemory(real.layers)));
  return 'sized';
}

const base = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS };

describe('the what-if\'s arithmetic equals the bytes of a real cache filled to N tokens', () => {
  it('quanto: bits 2 and 4, both axes, group sizes 16–128, residuals 1–32, float32 and float16', () => {
    const outcomes: string[] = [];
    for (const nbits of [2, 4]) {
      for (const [axisKey, axisValue] of [[0, 0], [-1, -1], [0, -1]] as const) {
        for (const groupSize of [16, 64, 128]) {
          for (const residualLength of [1, 8, 32]) {
            for (const dtype of ['float32', 'float16'] as const) {
              outcomes.push(expectSameBytes({ ...base, nbits, axisKey, axisValue, groupSize, residualLength }, dtype, 5, 45));
            }
          }
        }
      }
    }
    // quanto's group must divide every flushed length's values: many of these are refused (by both), enough are sized
    expect(outcomes).toContain('refused');
    expect(outcomes.filter((outcome) => outcome === 'sized').length).toBeGreaterThan(outcomes.length / 4);
  });

  it('HQQ: bits 1, 2, 3, 4 and 8, both axes, group sizes 16–64, residuals 1–16 (refusals refused by both)', () => {
    const outcomes: string[] = [];
    for (const nbits of [1, 2, 3, 4, 8]) {
      for (const [axisKey, axisValue] of [[0, 0], [1, 1], [1, 0]] as const) {
        for (const groupSize of [16, 64]) {
          for (const residualLength of [1, 16]) {
            outcomes.push(expectSameBytes({ ...base, backend: 'hqq', nbits, axisKey, axisValue, groupSize, residualLength }, 'float32', 8, 40));
          }
        }
      }
    }
    expect(outcomes).toContain('refused'); // 3-bit axis 1, for one
    expect(outcomes.filter((outcome) => outcome === 'sized').length).toBeGreaterThan(outcomes.length / 2);
  });

  it('the kvscope extensions: K/V bits, layer maps and full-precision layers, sinks, rotation, outliers', () => {
    const extensions: CacheExtensions[] = [
      { nbitsKey: 4, nbitsValue: 2 },
      { layerMap: [{ layer: 1, nbitsKey: 2, nbitsValue: 4 }, { layer: 2, fullPrecision: true }] },
      { fullPrecisionFirstLayers: 1 },
      { fullPrecisionLastLayers: 2 },
      { sinkTokens: 4 },
      { sinkTokens: 64 }, // more than the store holds
      { rotation: 'hadamard', rotateValues: true },
      { outlierQuantile: 0.99 },
      { nbitsKey: 2, nbitsValue: 4, sinkTokens: 3, rotation: 'hadamard', outlierQuantile: 0.95 },
    ];
    for (const ext of extensions) {
      for (const backend of ['quanto', 'hqq'] as const) {
        const settings = { ...base, backend, groupSize: 32, residualLength: 8, axisKey: backend === 'hqq' ? 1 : 0, extensions: ext };
        expect(expectSameBytes(settings, 'float32', 6, 41), JSON.stringify(settings)).toBe('sized');
      }
    }
  });

  it('every runtime format (app/quant/runtime-formats/), K and V apart, float32 and float16', () => {
    for (const name of RUNTIME_FORMAT_NAMES) {
      // a format whose blocks do not fit head_dim 64 (MLX's groups of 128) is refused by both
      const refused = runtimeFormat(name).refusal({ headDim: HEAD_DIM, dtype: 'float32', side: 'key' }) !== null;
      for (const dtype of ['float32', 'float16'] as const) {
        expect(expectSameBytes({ ...base, extensions: { kvFormatKey: name, kvFormatValue: name } }, dtype, 5, 37), name).toBe(refused ? 'refused' : 'sized');
      }
    }
    expect(expectSameBytes({ ...base, extensions: { kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'llama.cpp:q4_0', calculateKvScales: true } }, 'float32', 5, 37)).toBe('sized');
  });

  it('a layer map mixing runtime formats and transformers\' layers (format_key/format_value), float32 and float16', () => {
    const layerMap = parseLayerMap('0: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q4_0}\n1: {nbits_key: 4, nbits_value: 2}\n2: {format_key: nvfp4, format_value: vllm:fp8_e4m3}\n', 'map.yaml');
    for (const dtype of ['float32', 'float16'] as const) {
      // the quanto layer flushes on transformers' schedule (residual 8) while the format layers keep every token written once
      expect(expectSameBytes({ ...base, groupSize: 32, residualLength: 8, extensions: { layerMap } }, dtype, 6, 41), dtype).toBe('sized');
    }
    // a format side beside a full one: the full side's rows in T, as WriteOnceLayer keeps them (the map's and --kv-format's alike)
    const halfFull = parseLayerMap('0: {format_key: llama.cpp:q8_0, nbits_value: full}\n2: {nbits_key: full, format_value: nvfp4}\n', 'map.yaml');
    for (const dtype of ['float32', 'float16'] as const) expect(expectSameBytes({ ...base, groupSize: 32, residualLength: 8, extensions: { layerMap: halfFull } }, dtype, 6, 41)).toBe('sized');
    const keysOnly = { ...base, extensions: { kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'vllm:fp8_e4m3', layerMap: parseLayerMap('1: {nbits_key: 4, nbits_value: full}\n', 'map.yaml') } };
    expect(expectSameBytes(keysOnly, 'float32', 5, 37)).toBe('sized');
    const refused = parseLayerMap('0: {format_key: mlx:4bit-g128, format_value: llama.cpp:q8_0}\n', 'map.yaml');
    expect(expectSameBytes({ ...base, extensions: { layerMap: refused } }, 'float32', 5, 37)).toBe('refused');
  });
});
