import { describe, expect, it } from 'vitest';
import { parseLayerMap } from '../cache/layer-map.js';
import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { evalSettingsFromOptions } from '../cli/eval-options.js';
import type { CliIo } from '../cli/io.js';
import { cacheOptions, quantizationOptions } from './run-settings-options.js';

/** No file is read: every option below is a value (the layer map as its text). */
const NO_FILES = new Proxy({}, { get: (_target, name) => () => { throw new Error(`no file access expected (${String(name)})`); } }) as CliIo;

/** Options as a point hands them to eval's parser (sweep-point-settings.ts): strings, switches true. */
function asParsed(options: Record<string, string | number | boolean>): Record<string, string | boolean> {
  return Object.fromEntries(Object.entries(options).map(([key, value]) => [key, typeof value === 'boolean' ? value : String(value)]));
}

function roundTrip(quantization: QuantizedCacheSettings, dequantize?: 'graph' | 'host') {
  const settings = { quantization, ...(dequantize === undefined ? {} : { dequantize }) };
  const options = { model: 'synthetic', ep: 'cpu', ...quantizationOptions(quantization), ...cacheOptions(settings) };
  return evalSettingsFromOptions(asParsed(options), NO_FILES);
}

const BASE: QuantizedCacheSettings = { backend: 'hqq', nbits: 4, axisKey: 1, axisValue: 1, groupSize: 32, residualLength: 16, layerPolicy: 'all' };

describe('typed run settings as eval\'s options (the Lab\'s sweeps)', () => {
  it('read back by eval\'s own parser as the same settings: every quantization field and extension', () => {
    const layerMap = parseLayerMap('1: {nbits_key: 4, nbits_value: full}\n3: full\n5: {nbits_key: 2, nbits_value: 8}\n', 'panel.yaml');
    const quantization: QuantizedCacheSettings = {
      ...BASE, layerPolicy: 'full-attention-only',
      extensions: { nbitsKey: 8, nbitsValue: 2, layerMap, fullPrecisionFirstLayers: 1, fullPrecisionLastLayers: 2, sinkTokens: 4, rotation: 'hadamard', rotateValues: true, outlierQuantile: 0.99 },
    };
    const read = roundTrip(quantization, 'host');
    expect(read.quantization).toEqual(quantization);
    expect(read.dequantize).toBe('host');
    expect(read.cacheMode).toBe('quantized');
  });

  it('the runtime formats, K and V apart, with their scales, and no backend field beside them (eval refuses one: the format replaces it)', () => {
    const extensions = { kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'llama.cpp:q8_0', calculateKvScales: true };
    const quantization: QuantizedCacheSettings = { ...BASE, extensions };
    expect(quantizationOptions(quantization)).toEqual({});
    expect(roundTrip(quantization).quantization.extensions).toEqual(extensions);
  });

  it('transformers\' settings alone add no option: the plain path\'s point is the plain path', () => {
    expect(cacheOptions({ quantization: BASE })).toEqual({});
    expect(roundTrip(BASE).quantization).toEqual(BASE);
    expect(roundTrip(BASE).dequantize).toBeUndefined();
  });
});
