import { describe, expect, it } from 'vitest';
import { expandSweep } from '../../../app/lab/sweep-points.js';
import { checkSweepSpec } from '../../../app/lab/sweep-spec.js';
import { EVAL_OPTION_SPECS } from '../../../app/cli/option-specs.js';
import { RETRIEVAL_OPTION_SPECS } from '../../../app/cli/retrieval-command.js';
import { isRetrievalSweep } from '../../../app/cli/sweep-retrieval.js';
import { extensionsFromOptions } from '../../../app/cli/extension-options.js';
import { parseLayerMap } from '../../../app/cache/layer-map.js';
import { DEFAULT_LAB_SETUP } from '../../store/lab-slice.js';
import { DEFAULT_RUN_FORM } from '../../store/settings-slice.js';
import { gridSize, labSpec } from './lab-spec.js';
import { paretoFrontier, pointLabel, tableRows } from './lab-metrics.js';
import { paretoFamilies, paretoOption } from './lab-charts.js';
import type { SweepRow } from '../../../app/lab/sweep-results.js';
import type { ChartTheme } from '../../charts/chart-theme.js';
import type { LabChartChoice } from '../../store/lab-slice.js';

/** A theme of plain colours (the Pareto option only copies them). */
const LIGHT_CHART_THEME = new Proxy({ dark: false, fontFamily: 'sans-serif' }, { get: (target, key) => (key in target ? target[key as keyof typeof target] : '#123456') }) as unknown as ChartTheme;

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

  it('with a retrieval task, sends the task\'s options in place of the text\'s windows: every point a retrieval eval (issue 28)', () => {
    const setup = { ...DEFAULT_LAB_SETUP, task: 'passkey', lengths: '256, 1k', depths: '0,50', samples: 2, seed: 7, textPath: '/some/text.txt', vary: { ...DEFAULT_LAB_SETUP.vary, nbits: '2, 4' } } as const;
    const { spec, problems } = labSpec(setup, DEFAULT_RUN_FORM, 'synthetic-retrieval');
    expect(problems).toEqual([]);
    expect(spec.fixed).toMatchObject({ ep: 'cpu', task: 'passkey', lengths: '256,1k', depths: '0,50', samples: 2, seed: 7 });
    for (const key of ['context', 'windows']) expect(spec.fixed).not.toHaveProperty(key);
    // a retrieval sweep generates its prompts: the text field is not sent (the runner refuses a text beside a task)
    expect(spec).not.toHaveProperty('text');
    expect(spec.grid).toEqual({ nbits: [2, 4] });
    // the host checks the spec against eval's options and the retrieval ones, as kvscope sweep does
    const checked = checkSweepSpec(spec, { ...EVAL_OPTION_SPECS, ...RETRIEVAL_OPTION_SPECS }, 'lab');
    const points = expandSweep(checked, 0);
    expect(points.map((point) => [point.options['task'], point.options['nbits']])).toEqual([['passkey', 2], ['passkey', 4]]);
    expect(isRetrievalSweep(checked, points)).toBe(true);
    // the dynamic cache as an extra point is a retrieval point too
    const withDynamic = labSpec({ ...setup, includeDynamic: true }, DEFAULT_RUN_FORM, 'synthetic-retrieval').spec;
    expect(expandSweep(withDynamic, 0).at(-1)!.options).toMatchObject({ cache: 'dynamic', task: 'passkey', lengths: '256,1k' });
    // none: the text evaluation as before, no task key
    expect(labSpec(DEFAULT_LAB_SETUP, DEFAULT_RUN_FORM, 'synthetic').spec.fixed).not.toHaveProperty('task');
  });

  it('a task without a needle takes no depths; bad task fields and a preset beside a task are said before anything runs', () => {
    expect(labSpec({ ...DEFAULT_LAB_SETUP, task: 'cwe', lengths: '4k' }, DEFAULT_RUN_FORM, 'm').spec.fixed).not.toHaveProperty('depths');
    const { problems } = labSpec({ ...DEFAULT_LAB_SETUP, task: 'niah-single', lengths: '128,2k', depths: '50,150', samples: 0, preset: 'kv' }, DEFAULT_RUN_FORM, 'm');
    expect(problems).toEqual([
      'Lengths: 128 leaves no room for the prompt beside niah-single\'s 128 answer tokens; give lengths above 128.',
      'Depths: 50,150 is not a list of percentages in 0–100.',
      'Samples: give a whole number of samples per cell, at least 1.',
      'Sensitivity presets score the text evaluation\'s windows: set the task to none, or the preset to none.',
    ]);
    expect(labSpec({ ...DEFAULT_LAB_SETUP, task: 'passkey', lengths: 'long' }, DEFAULT_RUN_FORM, 'm').problems).toEqual(['Lengths: long is not a list of token counts (1024 or 1k).']);
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

describe('the Lab\'s Pareto plot with runtime formats (issue 27): each family its own mark, named', () => {
  const settings = { cacheMode: 'quantized', backend: 'quanto', nbits: 4, axisKey: 0, axisValue: 0, groupSize: 64, residualLength: 128, layers: 'all', parts: 'both' };
  const result = (bits: number, kld: number) => ({
    tokens: 10, ppl: 2, pplError: 0, pplReference: 2, pplReferenceError: 0, deltaPpl: 0, deltaPplError: 0, pplRatio: 1, pplRatioError: 0,
    kldMean: kld, kldMeanError: 0, kldMedian: kld, kldP99: kld, kldP999: kld, kldMax: kld, top1Agreement: 1, top1AgreementError: 0,
    deltaPMean: 0, deltaPMeanError: 0, deltaPRms: 0, deltaPRmsError: 0, bitsPerValue: bits, storedBytes: 1, fp16BaselineBytes: 4,
  });
  const rows: SweepRow[] = [
    { index: 0, name: 'a', status: 'ok', reason: null, options: {}, settings: { ...settings, family: 'transformers' }, result: result(18.5, 0.2) },
    { index: 1, name: 'b', status: 'ok', reason: null, options: {}, settings: { ...settings, family: 'llama.cpp', kvFormatKey: 'llama.cpp:q4_0+rot', kvFormatValue: 'llama.cpp:q4_0+rot' }, result: result(4.5, 0.1) },
    { index: 2, name: 'c', status: 'ok', reason: null, options: {}, settings: { ...settings, family: 'vLLM, SGLang', kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'vllm:fp8_e5m2' }, result: result(8, 0.05) },
    { index: 3, name: 'd', status: 'ok', reason: null, options: {}, settings: { ...settings, family: 'llama.cpp', kvFormatKey: 'llama.cpp:q8_0', kvFormatValue: 'llama.cpp:q8_0' }, result: result(8.5, 0.01) },
  ];

  it('transformers in circles, each runtime in a shape of its own, with a legend naming them; the labels name the formats', () => {
    const families = paretoFamilies(rows);
    expect(families.map((f) => [f.name, f.symbol, f.rows.map((r) => r.name)])).toEqual([
      ['transformers', 'circle', ['a']], ['llama.cpp', 'diamond', ['b', 'd']], ['vLLM, SGLang', 'triangle', ['c']],
    ]);
    const { option, points } = paretoOption(rows, { x: 'bits', y: 'kld', logX: false, logY: false, labels: false } satisfies LabChartChoice, LIGHT_CHART_THEME);
    expect(points).toBe(4);
    const series = option['series'] as { name: string; symbol?: string; data: unknown[] }[];
    expect(series.map((s) => [s.name, s.symbol, s.data.length])).toEqual([
      ['transformers', 'circle', 1], ['llama.cpp', 'diamond', 2], ['vLLM, SGLang', 'triangle', 1], ['Pareto frontier', 'none', 3],
    ]);
    expect((option['legend'] as { data: string[] }).data).toEqual(['transformers', 'llama.cpp', 'vLLM, SGLang']);
    expect(pointLabel(rows[1]!)).toBe('llama.cpp:q4_0+rot');
    expect(pointLabel(rows[2]!)).toBe('K vllm:fp8_e4m3, V vllm:fp8_e5m2');
    // transformers alone: one series, no legend, as before
    const alone = paretoOption(rows.slice(0, 1), { x: 'bits', y: 'kld', logX: false, logY: false, labels: false } satisfies LabChartChoice, LIGHT_CHART_THEME).option;
    expect(alone['legend']).toBeUndefined();
  });
});
