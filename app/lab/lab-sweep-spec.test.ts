import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import { parseLayerMap } from '../cache/layer-map.js';
import { EVAL_OPTION_SPECS } from '../cli/option-specs.js';
import { settingsForPoint } from '../cli/sweep-point-settings.js';
import type { CliIo } from '../cli/io.js';
import type { RunSettings } from '../engine/types.js';
import { parseApiRequest } from '../protocol/parse-api-message.js';
import type { LabSweepSettings } from './lab-api-methods.js';
import { gridSize, labSweepSpec } from './lab-sweep-spec.js';
import { expandSweep } from './sweep-points.js';
import { checkSweepSpec } from './sweep-spec.js';

const NO_FILES = new Proxy({}, { get: (_target, name) => () => { throw new Error(`no file access expected (${String(name)})`); } }) as CliIo;

const RUN: RunSettings = {
  model: 'synthetic', executionProvider: 'cpu', cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
  prompt: 'Once upon a time', maxNewTokens: 32, sampling: { greedy: true, temperature: 1, topK: 50, topP: 1, seed: 0 }, reference: false,
};
const NO_VARY: LabSweepSettings['vary'] = { backend: [], nbits: [], groupSize: [], residualLength: [], axisKey: [], axisValue: [] };

function sweep(patch: Partial<LabSweepSettings>): LabSweepSettings {
  return { run: RUN, vary: NO_VARY, includeDynamic: false, evaluation: { kind: 'text', context: 128, windows: 1 }, ...patch };
}

describe('a Lab sweep from typed settings (the one function the host and the page\'s preview use)', () => {
  it('crosses the API as the typed settings the Run panel sends, checked by their declaration', () => {
    const settings = sweep({ vary: { ...NO_VARY, nbits: [2, 4] }, preset: 'kv' });
    const request = parseApiRequest({ type: 'lab-start-sweep', id: 1, request: { kind: 'new', name: 'n', jobs: 1, settings } });
    expect(request).toEqual({ type: 'lab-start-sweep', id: 1, request: { kind: 'new', name: 'n', jobs: 1, settings } });
    const bad = { ...settings, run: { ...RUN, quantization: { ...RUN.quantization, groupSize: '64' } } };
    expect(() => parseApiRequest({ type: 'lab-start-sweep', id: 2, request: { kind: 'new', name: 'n', jobs: 1, settings: bad } }))
      .toThrow('request.settings.run.quantization.groupSize: expected an integer ≥ -9007199254740991, got "64"');
  });

  it('fixes the run\'s fields and varies those given values; its keys are eval\'s options', () => {
    const { spec, problems } = labSweepSpec(sweep({ vary: { ...NO_VARY, nbits: [2, 4], backend: ['quanto', 'hqq'] } }));
    expect(problems).toEqual([]);
    expect(spec.grid).toEqual({ backend: ['quanto', 'hqq'], nbits: [2, 4] });
    expect(spec.fixed).toEqual({ ep: 'cpu', context: 128, windows: 1, 'group-size': 64, 'residual-length': 128, 'axis-key': 0, 'axis-value': 0 });
    expect(gridSize(spec)).toBe(4);
    expect(() => checkSweepSpec(spec, EVAL_OPTION_SPECS, 'lab')).not.toThrow();
  });

  it('every point runs the Run panel\'s layer map, read back by eval\'s parser as the same plan, beside the dynamic cache too', () => {
    const layerMap = parseLayerMap('1: {nbits_key: 4, nbits_value: full}\n3: full\n', 'panel.yaml');
    const run = { ...RUN, quantization: { ...RUN.quantization, extensions: { layerMap, sinkTokens: 4 } }, dequantize: 'host' as const };
    for (const includeDynamic of [false, true]) {
      const { spec, problems } = labSweepSpec(sweep({ run, includeDynamic, vary: { ...NO_VARY, nbits: [2, 4] } }));
      expect(problems).toEqual([]);
      const points = expandSweep(checkSweepSpec(spec, EVAL_OPTION_SPECS, 'lab'), 5);
      const settings = points.map((point) => settingsForPoint(point, spec, null, NO_FILES));
      const quantized = settings.filter((s) => !(s instanceof Error) && s.cacheMode === 'quantized');
      expect(quantized.map((s) => !(s instanceof Error) && s.quantization.nbits)).toEqual([2, 4]);
      for (const s of quantized) {
        if (s instanceof Error) throw s;
        expect(s.quantization.extensions).toEqual({ layerMap, sinkTokens: 4 });
        expect(s.dequantize).toBe('host');
      }
      expect(settings.filter((s) => !(s instanceof Error) && s.cacheMode === 'dynamic')).toHaveLength(includeDynamic ? 1 : 0);
    }
  });

  it('a runtime KV format from the Run panel runs as that format (no backend option eval would refuse beside it); varying a backend field is refused', () => {
    const run = { ...RUN, quantization: { ...RUN.quantization, extensions: { kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'vllm:fp8_e4m3' } } };
    const { spec, problems } = labSweepSpec(sweep({ run, includeDynamic: true }));
    expect(problems).toEqual([]);
    const settings = expandSweep(spec, 0).map((point) => settingsForPoint(point, spec, null, NO_FILES));
    expect(settings.map((s) => (s instanceof Error ? s.message : s.quantization.extensions?.kvFormatKey ?? s.cacheMode))).toEqual(['vllm:fp8_e4m3', 'dynamic']);
    expect(labSweepSpec(sweep({ run, vary: { ...NO_VARY, nbits: [2] } })).problems).toEqual([
      '--nbits configures transformers\' QuantizedCache, which the run panel\'s runtime KV format replaces; clear the format or the values to sweep.',
    ]);
  });

  it('says what keeps a sweep from running: values for the dynamic cache, a preset beside it or beside a task', () => {
    const dynamic = { ...RUN, cacheMode: 'dynamic' as const };
    expect(labSweepSpec(sweep({ run: dynamic, vary: { ...NO_VARY, groupSize: [32] }, preset: 'layers' })).problems).toEqual([
      '--group-size only applies to the quantized cache; the run panel is set to the dynamic cache.',
      'Sensitivity presets quantize layers one at a time: set the run panel to the quantized cache.',
    ]);
    const retrieval = labSweepSpec(sweep({ evaluation: { kind: 'retrieval', task: 'passkey', lengths: '256, 1k', depths: '0,50', samples: 2, seed: 7 }, preset: 'kv' }));
    expect(retrieval.problems).toEqual(['Sensitivity presets score the text evaluation\'s windows: set the task to none, or the preset to none.']);
    expect(retrieval.spec.fixed).toMatchObject({ task: 'passkey', lengths: '256,1k', depths: '0,50', samples: 2, seed: 7 });
  });
});
