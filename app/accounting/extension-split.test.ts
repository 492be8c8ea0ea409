import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import { planLayerQuantization } from '../cache/quantization-plan.js';
import { QuantizedLayer } from '../cache/quantized-layer.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import { quantizerFor } from '../quant/registry.js';
import { kvTensor } from '../tensor/kv-tensor.js';
import { estimateKvMemory } from './memory-what-if.js';

/** The synthetic model's geometry: 8 layers, 4 KV heads, head_dim 64. */
const synthetic = parseModelConfig(JSON.stringify({
  model_type: 'llama', num_hidden_layers: 8, num_attention_heads: 8, num_key_value_heads: 4, hidden_size: 512, head_dim: 64, vocab_size: 256,
}), 'config.json');

describe('the memory what-if with kvscope extensions', () => {
  it('agrees byte for byte with a real QuantizedLayer: K8V4, 4 sink tokens, Hadamard keys, 1% outliers', () => {
    const settings: QuantizedCacheSettings = {
      ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 4, axisKey: 1, axisValue: 0, groupSize: 32, residualLength: 8,
      extensions: { nbitsKey: 8, nbitsValue: 4, sinkTokens: 4, rotation: 'hadamard', outlierQuantile: 0.99 },
    };
    const layer = new QuantizedLayer(quantizerFor('hqq'), settings, planLayerQuantization(settings, 0, 8)!);
    const tensor = (seq: number, seed: number) => kvTensor([1, 4, seq, 64], 'float32', Float32Array.from({ length: 4 * seq * 64 }, (_, i) => Math.sin(i * 0.37 + seed)));
    layer.update(tensor(12, 1), tensor(12, 2));
    for (let step = 1; step < 60; step++) layer.update(tensor(1, step), tensor(1, -step));
    const estimated = estimateKvMemory({ config: synthetic, kvDtype: 'float32', cacheMode: 'quantized', settings, promptTokens: 12, contextLength: 71 });
    const { workingBytes: _w, ...actual } = layer.memory();
    const { workingBytes: _e, ...predicted } = estimated.rows[0]!.perLayer!;
    expect(actual.extensions!.outliers).toBeGreaterThan(0);
    expect(predicted).toEqual(actual);
    layer.dispose();
  });

  it('gives full-precision layers and per-layer bits their own rows', () => {
    const settings: QuantizedCacheSettings = {
      ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq',
      extensions: { fullPrecisionFirstLayers: 1, layerMap: [{ layer: 7, nbitsKey: 8, nbitsValue: 8 }] },
    };
    const result = estimateKvMemory({ config: synthetic, kvDtype: 'float16', cacheMode: 'quantized', settings, promptTokens: 32, contextLength: 1024 });
    expect(result.rows.map((row) => [row.plan, row.layers])).toEqual([['dynamic', [0]], ['quantized', [1, 2, 3, 4, 5, 6]], ['quantized', [7]]]);
    const [full, four, eight] = result.rows.map((row) => row.perLayer!);
    expect(full!.fullPrecisionBytes).toBe(1024 * 2 * 4 * 64 * 2);
    expect(eight!.codeBytes).toBe(2 * four!.codeBytes);
  });
});
