import { describe, expect, it } from 'vitest';
import { expandSweep } from '../../../app/lab/sweep-points.js';
import { checkSweepSpec } from '../../../app/lab/sweep-spec.js';
import { EVAL_OPTION_SPECS } from '../../../app/cli/option-specs.js';
import { extensionsFromOptions } from '../../../app/cli/extension-options.js';
import { parseLayerMap } from '../../../app/cache/layer-map.js';
import { DEFAULT_LAB_SETUP } from '../../store/lab-slice.js';
import { DEFAULT_RUN_FORM } from '../../store/settings-slice.js';
import { gridSize, labSpec } from './lab-spec.js';
import { paretoFrontier, tableRows } from './lab-metrics.js';

describe('the Lab setup as a sweep spec', () => {
  it('fixes the run panel\'s fields and varies those given several values; its keys are eval\'s options', () => {
    const { spec, problems } = labSpec({ ...DEFAULT_LAB_SETUP, vary: { ...DEFAULT_LAB_SETUP.vary, nbits: '2, 4', backend: 'quanto,hqq' } }, DEFAULT_RUN_FORM, 'synthetic');
    expect(problems).toEqual([]);
    expect(spec.grid).toEqual({ backend: ['quanto', 'hqq'], nbits: [2, 4] });
    expect(spec.fixed).toMatchObject({ 'group-size': 64, 'residual-length': 128, 'axis-key': 0, ep: 'cpu', context: 512, windows: 4 });
    expect(gridSize(spec)).toBe(4);
    expect(() => checkSweepSpec(spec, EVAL_OPTION_SPECS, 'lab')).not.toThrow();
  });

  it('no list is one evaluation; the dynamic cache as an extra point takes no quantization option', () => {
    const one = labSpec({ ...DEFAULT_LAB_SETUP, vary: { ...DEFAULT_LAB_SETUP.vary, nbits: '' } }, DEFAULT_RUN_FORM, 'synthetic').spec;
    expect(gridSize(one)).toBe(1);
    expect(expandSweep(one, 0)).toHaveLength(1);
    const withDynamic = labSpec({ ...DEFAULT_LAB_SETUP, includeDynamic: true }, DEFAULT_RUN_FORM, 'synthetic').spec;
    const points = expandSweep(withDynamic, 0);
    expect(points).toHaveLength(3);
    expect(points[2]!.options).toEqual({ cache: 'dynamic', context: 512, ep: 'cpu', windows: 4 });
  });

  it('carries the run panel\'s dequantize choice: host as --dequantize host, the default as eval\'s default', () => {
    const host = labSpec(DEFAULT_LAB_SETUP, { ...DEFAULT_RUN_FORM, dequantize: 'host' }, 'synthetic').spec;
    expect(host.fixed).toMatchObject({ dequantize: 'host' });
    expect(() => checkSweepSpec(host, EVAL_OPTION_SPECS, 'lab')).not.toThrow();
    expect(labSpec(DEFAULT_LAB_SETUP, DEFAULT_RUN_FORM, 'synthetic').spec.fixed).not.toHaveProperty('dequantize');
    const withDynamic = expandSweep(labSpec({ ...DEFAULT_LAB_SETUP, includeDynamic: true }, { ...DEFAULT_RUN_FORM, dequantize: 'host' }, 'synthetic').spec, 0);
    expect(withDynamic.filter((point) => point.options['dequantize'] === 'host')).toHaveLength(withDynamic.length - 1);
  });

  it('carries the run panel\'s layer map as its content, which each point reads back as the same plan (issue 25)', () => {
    // Layer 1's values and layer 3 wholly in full precision: the plan the panel shows.
    const layerMap = parseLayerMap('1: {nbits_key: 4, nbits_value: full}\n3: full\n', 'panel.yaml');
    const form = { ...DEFAULT_RUN_FORM, quantization: { ...DEFAULT_RUN_FORM.quantization, extensions: { layerMap } } };
    for (const includeDynamic of [false, true]) {
      const { spec, problems } = labSpec({ ...DEFAULT_LAB_SETUP, includeDynamic, vary: { ...DEFAULT_LAB_SETUP.vary, nbits: '2, 4' } }, form, 'synthetic');
      expect(problems).toEqual([]);
      expect(() => checkSweepSpec(spec, EVAL_OPTION_SPECS, 'lab')).not.toThrow();
      expect(JSON.parse(String((spec.fixed['layer-map-text'] ?? spec.grid['layer-map-text']?.[0])))).toEqual({ 1: { nbits_key: 4, nbits_value: 'full' }, 3: 'full' });
      const quantized = expandSweep(spec, 5).filter((point) => point.options['cache'] !== 'dynamic');
      expect(quantized).toHaveLength(2);
      for (const point of quantized) {
        // A point's options reach eval as strings (sweep-point-settings.ts); no file is read.
        const raw = Object.fromEntries(Object.entries(point.options).map(([key, value]) => [key, typeof value === 'boolean' ? value : String(value)]));
        expect(extensionsFromOptions(raw)?.layerMap).toEqual(layerMap);
      }
    }
    // A 32-layer map's text, varied against the dynamic point, names the folders by its hash: the nbits after it still tell them apart.
    const long = parseLayerMap(Array.from({ length: 32 }, (_, layer) => `${layer}: {nbits_key: 4, nbits_value: ${layer % 2 === 0 ? 2 : 'full'}}`).join('\n'), 'long.yaml');
    const longForm = { ...form, quantization: { ...form.quantization, extensions: { layerMap: long } } };
    const points = expandSweep(labSpec({ ...DEFAULT_LAB_SETUP, includeDynamic: true, vary: { ...DEFAULT_LAB_SETUP.vary, nbits: '2, 4' } }, longForm, 'synthetic').spec, 32);
    expect(points.map((point) => point.name.replace(/h[0-9a-f]{8}/, 'HASH'))).toEqual([
      'axis-key-0_axis-value-0_backend-quanto_group-size-64_layer-map-text-HASH_nbits-2_residual-length-128',
      'axis-key-0_axis-value-0_backend-quanto_group-size-64_layer-map-text-HASH_nbits-4_residual-length-128',
      'cache-dynamic',
    ]);
  });

  it('says what is wrong with a list', () => {
    const { problems } = labSpec({ ...DEFAULT_LAB_SETUP, vary: { ...DEFAULT_LAB_SETUP.vary, nbits: '2, four', backend: 'HQQ' } }, DEFAULT_RUN_FORM, 'synthetic');
    expect(problems).toEqual(['backend: HQQ is not quanto or hqq.', 'nbits: four is not an integer.']);
  });
});

describe('the Lab\'s Pareto frontier and table', () => {
  it('keeps the points no other beats on both cost and loss', () => {
    const points = [[3, 5], [4, 3], [4, 2], [6, 0.1], [5, 4], [8, 0.1], [10, 0]] as const;
    expect(paretoFrontier(points, (p) => p[0], (p) => p[1])).toEqual([[3, 5], [4, 2], [6, 0.1], [10, 0]]);
  });

  it('filters on every word and sorts with unmeasured rows last', () => {
    const row = (index: number, backend: string, kld: number | null) => ({
      index, name: `p${index}`, status: kld === null ? 'refused' : 'ok', reason: kld === null ? 'no' : null, options: {},
      settings: { cacheMode: 'quantized', backend, nbits: 4, axisKey: 0, axisValue: 0, groupSize: 32, residualLength: 32, layers: 'all', parts: 'both' },
      result: kld === null ? null : { kldMean: kld } as never,
    }) as const;
    const rows = [row(0, 'quanto', 0.3), row(1, 'hqq', 0.1), row(2, 'hqq', null), row(3, 'quanto', 0.2)];
    expect(tableRows(rows as never, '', 'kld', false).map((r) => r.index)).toEqual([1, 3, 0, 2]);
    expect(tableRows(rows as never, '', 'kld', true).map((r) => r.index)).toEqual([0, 3, 1, 2]);
    expect(tableRows(rows as never, 'hqq 4-bit', 'index', false).map((r) => r.index)).toEqual([1, 2]);
  });
});
