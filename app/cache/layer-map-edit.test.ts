import { describe, expect, it } from 'vitest';
import type { LayerMap } from './cache-extensions.js';
import { editLayers, layerDefaults, type LayerDefaults } from './layer-map-edit.js';
import { formatLayerMap, parseLayerMap } from './layer-map.js';
import { resolveCachePlan } from './cache-plan.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from './cache-config.js';

const DEFAULTS: LayerDefaults = { key: { bits: 4 }, value: { bits: 4 } };

describe('editLayers: the run panel\'s per-layer plan as layer-map entries', () => {
  it('sets a range to full precision, and all layers to K 4 / V 2, in ascending order', () => {
    const full = editLayers(undefined, [0, 1, 2, 3], { kind: 'full' }, DEFAULTS);
    expect(full).toEqual([0, 1, 2, 3].map((layer) => ({ layer, fullPrecision: true })));
    const all = editLayers(full, [0, 1, 2, 3, 4, 5], { kind: 'sides', key: { bits: 4 }, value: { bits: 2 } }, DEFAULTS);
    expect(all).toEqual([0, 1, 2, 3, 4, 5].map((layer) => ({ layer, nbitsKey: 4, nbitsValue: 2 })));
  });

  it('keeps the side an edit leaves out: a set layer its own, an unset layer the default', () => {
    const map: LayerMap = [{ layer: 2, nbitsKey: 2, nbitsValue: 2 }];
    expect(editLayers(map, [2, 3], { kind: 'sides', value: { bits: 'full' } }, DEFAULTS)).toEqual([
      { layer: 2, nbitsKey: 2, nbitsValue: 'full' },
      { layer: 3, nbitsKey: 4, nbitsValue: 'full' },
    ]);
  });

  it('gives an unset layer\'s other side the same runtime format (one layer is a write-once layer or a QuantizedLayer), but keeps a set side', () => {
    const v = editLayers(undefined, [2], { kind: 'sides', value: { format: 'llama.cpp:q8_0' } }, DEFAULTS);
    expect(v).toEqual([{ layer: 2, formatKey: 'llama.cpp:q8_0', formatValue: 'llama.cpp:q8_0' }]);
    const keysFull = editLayers([{ layer: 2, nbitsKey: 'full', nbitsValue: 4 }], [2], { kind: 'sides', value: { format: 'llama.cpp:q8_0' } }, DEFAULTS);
    expect(keysFull).toEqual([{ layer: 2, nbitsKey: 'full', formatValue: 'llama.cpp:q8_0' }]);
  });

  it('spells both sides full as a full-precision layer, and both sides back to default as no entry at all', () => {
    const map: LayerMap = [{ layer: 1, nbitsKey: 'full', nbitsValue: 2 }];
    expect(editLayers(map, [1], { kind: 'sides', value: { bits: 'full' } }, DEFAULTS)).toEqual([{ layer: 1, fullPrecision: true }]);
    const keyDefault = editLayers(map, [1], { kind: 'sides', key: 'default' }, DEFAULTS);
    expect(keyDefault).toEqual([{ layer: 1, nbitsKey: 4, nbitsValue: 2 }]);
    expect(editLayers(keyDefault, [1], { kind: 'sides', value: 'default' }, DEFAULTS)).toBeUndefined();
    // an explicit 4 equal to the default stays pinned: the layer keeps 4 bits when nbits changes
    expect(editLayers(undefined, [0], { kind: 'sides', key: { bits: 4 }, value: { bits: 4 } }, DEFAULTS)).toEqual([{ layer: 0, nbitsKey: 4, nbitsValue: 4 }]);
  });

  it('resets layers to the default, and the map to nothing once no layer is set', () => {
    const map: LayerMap = [{ layer: 0, fullPrecision: true }, { layer: 5, nbitsKey: 2, nbitsValue: 2 }];
    expect(editLayers(map, [0], { kind: 'default' }, DEFAULTS)).toEqual([{ layer: 5, nbitsKey: 2, nbitsValue: 2 }]);
    expect(editLayers(map, [0, 1, 2, 3, 4, 5], { kind: 'default' }, DEFAULTS)).toBeUndefined();
  });

  it('takes the defaults from K/V bits and --kv-format, as the cache plan does', () => {
    expect(layerDefaults({ nbits: 4, extensions: { nbitsKey: 8 } })).toEqual({ key: { bits: 8 }, value: { bits: 4 } });
    expect(layerDefaults({ nbits: 4, extensions: { kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'vllm:fp8_e5m2' } }))
      .toEqual({ key: { format: 'vllm:fp8_e4m3' }, value: { format: 'vllm:fp8_e5m2' } });
  });
});

describe('round trip: YAML → editor → YAML', () => {
  it('a file read, edited and written reads back as the same entries, and the cache plan follows them', () => {
    const text = '0: full\n1: {nbits_key: 2, nbits_value: full}\n5: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q4_0}\n';
    const loaded = parseLayerMap(text, 'preset.yaml');
    const edited = editLayers(editLayers(loaded, [6, 7], { kind: 'sides', key: { bits: 4 }, value: { bits: 2 } }, DEFAULTS), [1], { kind: 'default' }, DEFAULTS)!;
    const written = formatLayerMap(edited, 'yaml');
    const reread = parseLayerMap(written, 'saved.yaml');
    expect(reread).toEqual(edited);
    expect(reread).toEqual([
      { layer: 0, fullPrecision: true },
      { layer: 5, formatKey: 'llama.cpp:q8_0', formatValue: 'llama.cpp:q4_0' },
      { layer: 6, nbitsKey: 4, nbitsValue: 2 },
      { layer: 7, nbitsKey: 4, nbitsValue: 2 },
    ]);
    expect(formatLayerMap(reread, 'yaml')).toBe(written);
    const layers = Array.from({ length: 8 }, () => ({ type: 'full_attention', actualKind: 'full_attention', hasKvCache: true, sharesKv: false }));
    const plan = resolveCachePlan(layers, { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { layerMap: reread } });
    expect(plan.map((layer) => layer.cache)).toEqual(['dynamic', 'quantized', 'quantized', 'quantized', 'quantized', 'quantized', 'quantized', 'quantized']);
    expect(plan[5]!.value).toMatchObject({ kind: 'runtime-format', format: 'llama.cpp:q4_0' });
  });
});
