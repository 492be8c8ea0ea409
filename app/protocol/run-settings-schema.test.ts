import { describe, expect, it } from 'vitest';
import { readQuantizedCacheSettings, readRunSettings } from './read-run-settings.js';

const SETTINGS = {
  model: 'synthetic', executionProvider: 'cpu', cacheMode: 'quantized',
  quantization: {
    backend: 'quanto', nbits: 4, axisKey: 0, axisValue: 0, groupSize: 64, residualLength: 128, layerPolicy: 'all',
    extensions: { layerMap: [{ layer: 0, nbitsKey: 'full', nbitsValue: 2 }, { layer: 1, fullPrecision: true, nbitsKey: 9 }] },
  },
  prompt: 'hi', maxNewTokens: 4, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 3 }, reference: false,
};

function withField(path: string, value: unknown): unknown {
  const copy = structuredClone(SETTINGS) as Record<string, unknown>;
  const keys = path.split('.');
  let at = copy;
  for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>;
  at[keys.at(-1)!] = value;
  return copy;
}

describe('RunSettings declared with zod', () => {
  it('reads settings as sent, a full-precision layer without its bits and unknown fields left at the boundary', () => {
    const settings = readRunSettings({ ...SETTINGS, extra: 1 }, 'settings');
    expect(settings.quantization.extensions?.layerMap).toEqual([{ layer: 0, nbitsKey: 'full', nbitsValue: 2 }, { layer: 1, fullPrecision: true }]);
    expect('extra' in settings).toBe(false);
    expect(settings.promptFormat).toBeUndefined();
  });

  it.each([
    ['settings.model', 3, 'settings.model: expected a string, got 3'],
    ['quantization.nbits', 2.5, 'settings.quantization.nbits: expected an integer ≥ -9007199254740991, got 2.5'],
    ['quantization.layerPolicy', 'some', 'settings.quantization.layerPolicy: expected one of all, full-attention-only, got "some"'],
    ['quantization.extensions.layerMap', [{ layer: 2, nbitsKey: 'half', nbitsValue: 2 }],
      'settings.quantization.extensions.layerMap[0].nbitsKey: expected an integer ≥ -9007199254740991, got "half"'],
    ['quantization.extensions.layerMap', [{ layer: 2, nbitsKey: 4 }], 'settings.quantization.extensions.layerMap[0].nbitsValue: expected an integer ≥ -9007199254740991, got nothing'],
    ['quantization.extensions.layerMap', [{ layer: -1, fullPrecision: true }], 'settings.quantization.extensions.layerMap[0].layer: expected an integer ≥ 0, got -1'],
    ['quantization.extensions.layerMap', [{ layer: 1, fullPrecision: false }], 'settings.quantization.extensions.layerMap[0].fullPrecision: expected true, got false'],
    ['quantization.extensions.rotation', 'givens', 'settings.quantization.extensions.rotation: expected one of hadamard, got "givens"'],
    ['promptTokenIds', [1, -2], 'settings.promptTokenIds[1]: expected an integer ≥ 0, got -2'],
    ['padPromptTo', 0, 'settings.padPromptTo: expected an integer ≥ 1, got 0'],
    ['sampling.topP', Number.NaN, 'settings.sampling.topP: expected a finite number, got NaN'],
  ])('refuses %s = %j with the path and what it found', (path, value, message) => {
    const input = path === 'settings.model' ? { ...SETTINGS, model: value } : withField(path, value);
    expect(() => readRunSettings(input, 'settings')).toThrow(message);
  });

  it('reports the first problem in field order', () => {
    expect(() => readRunSettings({ ...SETTINGS, model: 1, prompt: 2 }, '')).toThrow('model: expected a string, got 1');
  });
});

describe('a layer map entry with a runtime format, as settings cross a boundary (a record, a request)', () => {
  const settings = (layerMap: unknown[]): unknown => ({ backend: 'quanto', nbits: 4, axisKey: 0, axisValue: 0, groupSize: 32, residualLength: 8, layerPolicy: 'all', extensions: { layerMap } });
  it('reads the format side without bits, and drops the placeholder bits older records wrote beside a format', () => {
    const read = readQuantizedCacheSettings(settings([{ layer: 0, formatKey: 'llama.cpp:q8_0', nbitsValue: 'full' }, { layer: 1, nbitsKey: 8, nbitsValue: 8, formatKey: 'nvfp4', formatValue: 'nvfp4' }]), 'settings');
    expect(read.extensions?.layerMap).toEqual([{ layer: 0, formatKey: 'llama.cpp:q8_0', nbitsValue: 'full' }, { layer: 1, formatKey: 'nvfp4', formatValue: 'nvfp4' }]);
  });
  it('still asks for the bits of a side without a format', () => {
    expect(() => readQuantizedCacheSettings(settings([{ layer: 0, formatKey: 'llama.cpp:q8_0' }]), 'settings')).toThrow(/nbitsValue/);
  });
});
