import { describe, expect, it } from 'vitest';
import { extensionsFromOptions } from './extension-options.js';
import type { CliIo } from './io.js';
import { settingsFromOptions } from './preflight-command.js';

const io = { readTextFile: (path: string) => (path === 'map.yaml' ? '2: full\n' : '') } as unknown as CliIo;

describe('the kvscope extensions from the command line', () => {
  it('are absent without their flags: transformers\' settings exactly', () => {
    expect(extensionsFromOptions({ nbits: '2' })).toBeUndefined();
    expect(settingsFromOptions({ nbits: '2' })).not.toHaveProperty('extensions');
  });
  it('read every flag', () => {
    expect(settingsFromOptions({
      'nbits-key': '8', 'nbits-value': '4', 'layer-map': 'map.yaml', 'full-precision-first': '1', 'full-precision-last': '2',
      'sink-tokens': '4', rotate: 'hadamard', 'rotate-values': true, outliers: '0.99',
    }, io).extensions).toEqual({
      nbitsKey: 8, nbitsValue: 4, layerMap: [{ layer: 2, fullPrecision: true }], fullPrecisionFirstLayers: 1, fullPrecisionLastLayers: 2,
      sinkTokens: 4, rotation: 'hadamard', rotateValues: true, outlierQuantile: 0.99,
    });
  });
  it('refuse malformed values as usage errors', () => {
    expect(() => extensionsFromOptions({ 'sink-tokens': 'four' })).toThrow('--sink-tokens must be an integer, got "four".');
    expect(() => extensionsFromOptions({ rotate: 'givens' })).toThrow('--rotate must be one of hadamard, got "givens".');
    expect(() => extensionsFromOptions({ outliers: '1%' })).toThrow('--outliers must be a number');
  });
});
