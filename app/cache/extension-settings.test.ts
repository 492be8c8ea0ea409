import { describe, expect, it } from 'vitest';
import { CacheError } from '../errors.js';
import { activeExtensions } from './active-extensions.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from './cache-config.js';
import { layerBits, type CacheExtensions } from './cache-extensions.js';
import { extensionProblems } from './extension-problems.js';
import { KvCache } from './kv-cache.js';
import { formatLayerMap, LayerMapError, parseLayerMap, resolvedLayerMap } from './layer-map.js';
import { planCacheLayers } from './layer-plan.js';
import { planLayerQuantization } from './quantization-plan.js';

const with_ = (extensions: CacheExtensions, overrides: Partial<QuantizedCacheSettings> = {}): QuantizedCacheSettings =>
  ({ ...DEFAULT_QUANTIZED_CACHE_SETTINGS, ...overrides, extensions });

const attention = (n: number) => Array.from({ length: n }, () => ({ actualKind: 'full_attention', hasKvCache: true }));

describe('layer bits: shorthands, then the layer map, then K/V bits, then nbits', () => {
  const settings = with_({
    nbitsKey: 8, nbitsValue: 2, fullPrecisionFirstLayers: 1, fullPrecisionLastLayers: 1,
    layerMap: [{ layer: 0, nbitsKey: 4, nbitsValue: 4 }, { layer: 2, nbitsKey: 4, nbitsValue: 2 }, { layer: 3, fullPrecision: true }],
  }, { backend: 'hqq' });
  it('resolves each layer', () => {
    expect([0, 1, 2, 3, 4, 5].map((layer) => layerBits(settings, layer, 6))).toEqual([
      'full-precision', { key: 8, value: 2 }, { key: 4, value: 2 }, 'full-precision', { key: 8, value: 2 }, 'full-precision',
    ]);
    expect(planCacheLayers(attention(6), 'all', settings)).toEqual(['dynamic', 'quantized', 'quantized', 'dynamic', 'quantized', 'dynamic']);
    expect(planLayerQuantization(settings, 2, 6)).toMatchObject({ key: { params: { nbits: 4 } }, value: { params: { nbits: 2 } } });
    expect(planLayerQuantization(settings, 3, 6)).toBeNull();
  });
  it('without extensions the plan and the bits are transformers\'', () => {
    expect(planCacheLayers(attention(3), 'all', DEFAULT_QUANTIZED_CACHE_SETTINGS)).toEqual(['quantized', 'quantized', 'quantized']);
    expect(planLayerQuantization(DEFAULT_QUANTIZED_CACHE_SETTINGS, 0, 3)).toEqual({
      key: { params: { nbits: 4, axis: 0, groupSize: 64 }, extensions: null }, value: { params: { nbits: 4, axis: 0, groupSize: 64 }, extensions: null },
    });
  });
  it('names what is active, and nothing at neutral values', () => {
    expect(activeExtensions(with_({ nbitsKey: 4, nbitsValue: 4, sinkTokens: 0, layerMap: [{ layer: 0, nbitsKey: 4, nbitsValue: 4 }] }), 2)).toEqual([]);
    expect(activeExtensions(settings, 6).map((item) => [item.id, item.detail])).toEqual([
      ['kv-bits-apart', 'K 8 bits, V 2 bits'],
      ['layer-map', '0: K4 V4, 2: K4 V2; full precision: 3'],
      ['full-precision-layers', 'first 1, last 1 (0, 3, 5)'],
    ]);
  });
});

describe('the one validation of the extensions', () => {
  it('refuses bad values with what to do, and the cache refuses to build with the first error', () => {
    const bad = with_({ nbitsValue: 3, sinkTokens: -1, outlierQuantile: 1, rotateValues: true, layerMap: [{ layer: 9, nbitsKey: 4, nbitsValue: 4 }] });
    const problems = extensionProblems(bad, { numLayers: 4 });
    expect(problems.map((p) => p.code)).toEqual(['invalid-nbits-value', 'invalid-layer-map', 'invalid-sink-tokens', 'invalid-rotation', 'invalid-outlier-quantile']);
    expect(problems[0]!.message).toMatch(/^`nbits` for `quanto` backend has to be one of \[`2`, `4`\] but got 3\n/);
    expect(problems.every((p) => p.fix.length > 0)).toBe(true);
    expect(() => new KvCache({ plan: ['quantized'], settings: bad })).toThrow(CacheError);
    expect(() => new KvCache({ plan: ['quantized'], settings: bad })).toThrow(/`nbits` for `quanto` backend has to be one of \[`2`, `4`\] but got 3/);
  });
});

describe('layer maps in KVTuner\'s preset format', () => {
  it('reads YAML and JSON to the same map and writes YAML that reads back identically', () => {
    const yaml = parseLayerMap('1:\n  nbits_key: 8\n  nbits_value: 4\n0: full\n', 'preset.yaml');
    const json = parseLayerMap('{"0": "full", "1": {"nbits_key": 8, "nbits_value": 4}}', 'preset.json');
    expect(yaml).toEqual([{ layer: 0, fullPrecision: true }, { layer: 1, nbitsKey: 8, nbitsValue: 4 }]);
    expect(json).toEqual(yaml);
    expect(parseLayerMap(formatLayerMap(yaml, 'yaml'), 'x.yaml')).toEqual(yaml);
    expect(parseLayerMap(formatLayerMap(yaml, 'json'), 'x.json')).toEqual(yaml);
    expect(resolvedLayerMap(with_({ layerMap: yaml, nbitsValue: 2 }), 3)).toEqual([
      { layer: 0, fullPrecision: true }, { layer: 1, nbitsKey: 8, nbitsValue: 4 }, { layer: 2, nbitsKey: 4, nbitsValue: 2 },
    ]);
  });
  it('refuses what it cannot read, naming the file and the entry', () => {
    expect(() => parseLayerMap('- 1\n- 2\n', 'a.yaml')).toThrow(LayerMapError);
    expect(() => parseLayerMap('x: full\n', 'a.yaml')).toThrow(/a.yaml: "x" is not a layer index/);
    expect(() => parseLayerMap('0: {nbits_key: 4, nbits_value: 4, group: 2}\n', 'a.yaml')).toThrow(/a.yaml, layer 0: unknown field "group"/);
    expect(() => parseLayerMap('0: half\n', 'a.yaml')).toThrow(/expected \{nbits_key: N, nbits_value: N\} or full, got "half"/);
  });

  it('refuses a map nested deeper than 64 flow collections before the YAML parser (issue 24), counting no bracket in quotes or comments', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    expect(() => parseLayerMap(deep, 'deep.yaml')).toThrow(/^deep\.yaml is not valid YAML or JSON: it nests deeper than any layer map does\./);
    expect(() => parseLayerMap(`${'['.repeat(65)}${']'.repeat(65)}`, 'd.yaml')).toThrow(/nests deeper than any layer map does/);
    // brackets in a comment or a quoted key are no nesting: the map is read as written
    const brackets = '['.repeat(100);
    expect(parseLayerMap(`# ${brackets}\n"0": {nbits_key: 4, nbits_value: 2} # ${brackets}\n'1': full\n`, 'c.yaml'))
      .toEqual(parseLayerMap('0: {nbits_key: 4, nbits_value: 2}\n1: full\n', 'plain.yaml'));
  });
});
