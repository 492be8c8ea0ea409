import { describe, expect, it } from 'vitest';
import { quantizerFor } from '../quant/registry.js';
import { runtimeFormat } from '../quant/runtime-formats/registry.js';
import type { KvTensor } from '../tensor/kv-tensor.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from './cache-config.js';
import { fullPrecisionLayersOf, quantizedSidesOf, resolveCachePlan, withSideTargets } from './cache-plan.js';
import { KvCache } from './kv-cache.js';
import { formatLayerMap, parseLayerMap, resolvedLayerMap } from './layer-map.js';
import { planCacheLayers } from './layer-plan.js';
import { QuantizedLayer } from './quantized-layer.js';
import { trackDisposables } from './test-support/disposables.js';
import { concatSeq, randomTensor } from './test-support/tensors.js';
import type { WriteOnceLayer } from './write-once-layer.js';

const track = trackDisposables();
const layers = [0, 1, 2].map(() => ({ actualKind: 'full_attention', hasKvCache: true }));
const base: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 16, residualLength: 4 };
/** layer 1's values in full precision, layer 2 wholly, layer 0 as transformers quantizes it */
const yaml = '0: {nbits_key: 4, nbits_value: 4}\n1: {nbits_key: 4, nbits_value: full}\n2: full\n';
const mapped: QuantizedCacheSettings = { ...base, extensions: { layerMap: parseLayerMap(yaml, 'map.yaml') } };

function kv(n: number, seed: number, headDim = 16): [KvTensor, KvTensor] {
  return [randomTensor([1, 2, n, headDim], seed), randomTensor([1, 2, n, headDim], seed + 1)];
}

describe('the cache plan (one per layer and side)', () => {
  it('resolves a layer map with a layer\'s values in full precision, and the defaults to transformers\' plan', () => {
    const plan = resolveCachePlan(layers, mapped);
    expect(plan.map((entry) => [entry.cache, entry.key.kind, entry.value.kind])).toEqual([
      ['quantized', 'backend', 'backend'], ['quantized', 'backend', 'full-precision'], ['dynamic', 'full-precision', 'full-precision'],
    ]);
    // A layer map is an extension: its layers take the extensions' codec, at neutral values bit for bit the backend's.
    expect(plan[0]!.key).toEqual({
      kind: 'backend', backend: 'quanto', residualLength: 4, params: { nbits: 4, axis: 0, groupSize: 16 }, extensions: { sinkTokens: 0, rotation: null, outlierQuantile: null },
    });
    expect(resolveCachePlan(layers, base)[0]!.key).toMatchObject({ kind: 'backend', extensions: null });
    expect(quantizedSidesOf(plan, 1)).toEqual({ key: true, value: false });
    expect(fullPrecisionLayersOf(plan)).toEqual([2]);
    expect(planCacheLayers(layers, 'all', mapped)).toEqual(plan.map((entry) => entry.cache));
    expect(resolveCachePlan(layers, base).every((entry) => entry.key.kind === 'backend' && entry.value.kind === 'backend')).toBe(true);
    expect(resolveCachePlan(layers, null).map((entry) => entry.cache)).toEqual(['dynamic', 'dynamic', 'dynamic']);
  });

  it('runs a layer\'s values in full precision: V exactly the history, K bit for bit the quantized layer\'s, bytes counted apart', () => {
    const quantizer = quantizerFor('quanto');
    const cache = track(new KvCache({ plan: planCacheLayers(layers, 'all', mapped), settings: mapped, quantizer }));
    const both = track(new QuantizedLayer(quantizer, base));
    const keys: KvTensor[] = [];
    const values: KvTensor[] = [];
    for (let step = 0; step < 12; step++) {
      const [key, value] = kv(step === 0 ? 8 : 1, 10 * step);
      keys.push(key);
      values.push(value);
      const out = cache.update(1, key, value);
      const reference = both.update(key, value);
      expect(out.value.data).toEqual(concatSeq(values).data);
      expect(out.key.data).toEqual(reference.key.data);
      // The prefill returns its inputs on both; from the first decode on, the quantized layer's values are dequantized.
      if (step > 0) expect(out.value.data).not.toEqual(reference.value.data);
    }
    const layer = cache.layer(1) as QuantizedLayer;
    expect(layer.flushCount).toBe(both.flushCount);
    // 19 tokens: the last flush (transformers' schedule, as the both-sides layer's) stored 16, three since in the residual.
    // Keys only: 16·2·16 codes at 4 bits, a scale and shift per 16 values in fp32: half the both-sides layer's.
    const memory = layer.memory();
    expect(memory).toMatchObject({ tokens: 19, quantizedTokens: 16, fullPrecisionTokens: 3, codeBytes: (16 * 2 * 16) / 2, metadataBytes: 16 * 2 * 2 * 4 });
    expect(memory.codeBytes * 2).toBe(both.memory().codeBytes);
    expect(memory.fullPrecisionBytes).toBe(2 * (16 * 3 + 16 * 19) * 4);
    expect(memory.totalBytes).toBe(memory.codeBytes + memory.metadataBytes + memory.fullPrecisionBytes);
    cache.dispose();
    both.dispose();
  });

  it('writes the plan back as a layer map that reads back the same (--write-layer-map)', () => {
    const written = formatLayerMap(resolvedLayerMap(mapped, 3), 'yaml');
    expect(written).toContain('nbits_value: full');
    expect(parseLayerMap(written, 'out.yaml')).toEqual(mapped.extensions!.layerMap);
    expect(parseLayerMap(formatLayerMap(mapped.extensions!.layerMap!, 'json'), 'out.json')).toEqual(mapped.extensions!.layerMap);
  });

  it('makes the lab\'s keys-only targets a plan: the targeted layers\' values and every other layer in full precision', () => {
    const targeted = withSideTargets(base, { layers: [0, 2], parts: 'key' }, 3);
    const plan = resolveCachePlan(layers, targeted);
    expect(plan.map((entry) => [entry.cache, entry.key.kind, entry.value.kind])).toEqual([
      ['quantized', 'backend', 'full-precision'], ['dynamic', 'full-precision', 'full-precision'], ['quantized', 'backend', 'full-precision'],
    ]);
    const sides = (settings: QuantizedCacheSettings) => resolveCachePlan(layers, settings).map((entry) => [entry.cache, entry.key, entry.value].map((side) => (typeof side === 'string' ? side : side.kind === 'backend' ? side.params : side.kind)));
    expect(sides(withSideTargets(base, { layers: null, parts: 'both' }, 3))).toEqual(sides(base));
  });

  it('keeps a runtime-format layer\'s values in full precision when the plan says so', () => {
    const settings = withSideTargets({ ...base, extensions: { kvFormatKey: 'llama.cpp:q8_0', kvFormatValue: 'llama.cpp:q8_0' } }, { layers: null, parts: 'key' }, 3);
    expect(resolveCachePlan(layers, settings)[0]).toMatchObject({ key: { kind: 'runtime-format', format: 'llama.cpp:q8_0' }, value: { kind: 'full-precision' } });
    const cache = track(new KvCache({ plan: planCacheLayers(layers, 'all', settings), settings, quantizer: quantizerFor('quanto') }));
    const [key, value] = kv(32, 7, 32);
    const out = cache.update(0, key, value);
    expect(out.value.data).toEqual(value.data);
    expect(out.key.data).not.toEqual(key.data);
    const layer = cache.layer(0) as WriteOnceLayer;
    expect(layer.formats.value).toBeNull();
    // q8_0: 34 bytes per 32 values (one block per row); the values 32 tokens × 2 heads × 32 dims in fp32.
    expect(runtimeFormat('llama.cpp:q8_0').rowBytes({ headDim: 32, dtype: 'float32', side: 'key' })).toBe(34);
    expect(layer.memory()).toMatchObject({ codeBytes: 32 * 2 * 34, metadataBytes: 0, fullPrecisionBytes: 32 * 2 * 32 * 4 });
    cache.dispose();
  });
});

describe('per-layer runtime formats in the layer map (format_key / format_value, a kvscope extension)', () => {
  /** layer 0 in llama.cpp q8_0 / q4_0, layer 1 transformers' quanto 4/2-bit, layer 2 FP8 keys with values kept exact */
  const formatsYaml = '0: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q4_0}\n1: {nbits_key: 4, nbits_value: 2}\n2: {format_key: vllm:fp8_e4m3, nbits_value: full}\n';
  const formatted: QuantizedCacheSettings = { ...base, extensions: { layerMap: parseLayerMap(formatsYaml, 'map.yaml') } };

  it('resolves each layer and side to its format, the backend or full precision', () => {
    const plan = resolveCachePlan(layers, formatted);
    expect(plan.map((entry) => [entry.cache, entry.key, entry.value].map((side) => (typeof side === 'string' ? side : side.kind === 'runtime-format' ? side.format : side.kind === 'backend' ? side.params.nbits : side.kind)))).toEqual([
      ['quantized', 'llama.cpp:q8_0', 'llama.cpp:q4_0'], ['quantized', 4, 2], ['quantized', 'vllm:fp8_e4m3', 'full-precision'],
    ]);
  });

  it('builds a WriteOnceLayer for the format layers and a QuantizedLayer for the backend layer, each as the plan says', () => {
    const cache = track(new KvCache({ plan: planCacheLayers(layers, 'all', formatted), settings: formatted, quantizer: quantizerFor('quanto') }));
    const [key, value] = kv(8, 11, 32);
    for (const layer of [0, 1, 2]) cache.update(layer, key, value);
    const first = cache.layer(0) as WriteOnceLayer;
    expect([first.formats.key?.name, first.formats.value?.name]).toEqual(['llama.cpp:q8_0', 'llama.cpp:q4_0']);
    // 8 tokens × 2 heads: q8_0 34 bytes per 32 values, q4_0 18
    expect(first.memory()).toMatchObject({ codeBytes: 8 * 2 * (34 + 18), fullPrecisionBytes: 0 });
    expect(cache.layer(1)).toBeInstanceOf(QuantizedLayer);
    const third = cache.layer(2) as WriteOnceLayer;
    expect([third.formats.key?.name, third.formats.value]).toEqual(['vllm:fp8_e4m3', null]);
    cache.dispose();
  });

  it('a side in a runtime format carries no bits, as read, as resolved and as written', () => {
    expect(formatted.extensions!.layerMap).toEqual([
      { layer: 0, formatKey: 'llama.cpp:q8_0', formatValue: 'llama.cpp:q4_0' },
      { layer: 1, nbitsKey: 4, nbitsValue: 2 },
      { layer: 2, formatKey: 'vllm:fp8_e4m3', nbitsValue: 'full' },
    ]);
    // --kv-format resolved for every layer (--write-layer-map): formats alone, no placeholder bits
    const everyLayer = resolvedLayerMap({ ...base, extensions: { kvFormatKey: 'nvfp4', kvFormatValue: 'llama.cpp:q8_0' } }, 2);
    expect(everyLayer).toEqual([0, 1].map((layer) => ({ layer, formatKey: 'nvfp4', formatValue: 'llama.cpp:q8_0' })));
    expect(JSON.parse(formatLayerMap(everyLayer, 'json'))).toEqual({ 0: { format_key: 'nvfp4', format_value: 'llama.cpp:q8_0' }, 1: { format_key: 'nvfp4', format_value: 'llama.cpp:q8_0' } });
  });

  it('writes the plan back with the formats (--write-layer-map), and --kv-format as a format on every layer', () => {
    const written = formatLayerMap(resolvedLayerMap(formatted, 3), 'yaml');
    expect(written).toContain('format_key: llama.cpp:q8_0');
    expect(written).not.toContain('nbits_key: 8');
    expect(parseLayerMap(written, 'out.yaml')).toEqual(formatted.extensions!.layerMap);
    expect(parseLayerMap(formatLayerMap(formatted.extensions!.layerMap!, 'json'), 'out.json')).toEqual(formatted.extensions!.layerMap);
    const everyLayer = { ...base, extensions: { kvFormatKey: 'nvfp4', kvFormatValue: 'llama.cpp:q8_0' } };
    const fromFlag = parseLayerMap(formatLayerMap(resolvedLayerMap(everyLayer, 3), 'yaml'), 'flag.yaml');
    expect(resolveCachePlan(layers, { ...base, extensions: { layerMap: fromFlag } })).toEqual(resolveCachePlan(layers, everyLayer));
  });

  it('refuses a side given twice, an unknown format, and a layer mixing a format side with a backend side', () => {
    expect(() => parseLayerMap('0: {nbits_key: 4, format_key: llama.cpp:q8_0, nbits_value: 4}\n', 'm.yaml')).toThrow(/m\.yaml, layer 0: nbits_key and format_key both give the keys; keep one/);
    expect(() => parseLayerMap('0: {format_key: llama.cpp:q3_k, format_value: nvfp4}\n', 'm.yaml')).toThrow(/format_key must name a runtime KV format as --kv-format does, got "llama\.cpp:q3_k"\. Formats: llama\.cpp:q8_0/);
    const mixed: QuantizedCacheSettings = { ...base, extensions: { layerMap: parseLayerMap('1: {format_key: llama.cpp:q8_0, nbits_value: 4}\n', 'm.yaml') } };
    expect(() => new KvCache({ plan: planCacheLayers(layers, 'all', mixed), settings: mixed, quantizer: quantizerFor('quanto') }))
      .toThrow(/layer 1 stores its keys in a runtime format and its values with quanto's quantizer/);
  });
});
