import { describe, expect, it } from 'vitest';
import { parseLayerMap } from '../cache/layer-map.js';
import { formatSettings } from './sweep-results.js';

/** The family a sweep point's cache belongs to: what results.csv's family column and the Pareto plot's marks say. */
describe('a sweep point\'s cache family', () => {
  it('is transformers\' alone, a runtime\'s format, or both where a layer map mixes formats with transformers\' layers', () => {
    expect(formatSettings(undefined)).toEqual({ family: 'transformers' });
    expect(formatSettings({ kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'llama.cpp:q4_0' })).toEqual({ family: 'vLLM, SGLang + llama.cpp', kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'llama.cpp:q4_0' });
    const layerMap = parseLayerMap('0: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q4_0}\n1: {nbits_key: 4, nbits_value: 4}\n2: {format_key: nvfp4, format_value: nvfp4}\n', 'map.yaml');
    expect(formatSettings({ layerMap })).toEqual({ family: 'transformers + llama.cpp + TensorRT-LLM, vLLM, SGLang' });
    expect(formatSettings({ layerMap: parseLayerMap('0: full\n1: {nbits_key: 2, nbits_value: 4}\n', 'map.yaml') })).toEqual({ family: 'transformers' });
  });
});
