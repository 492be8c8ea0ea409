import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseLayerMap } from '../cache/layer-map.js';
import { runtimeFormatLayerMemory } from '../accounting/runtime-format-bytes.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import type { CacheExtensions } from '../cache/cache-extensions.js';
import { layerMemory, type LayerMemory } from '../cache/layer-memory.js';
import type { KvDtype } from '../tensor/kv-tensor.js';
import type { EvalResult, RecordedEvalSettings } from './eval-result.js';
import { parseEvalRecord } from './eval-record.js';
import { formatBitsPerValue, formatSettings, rowFromResult, sweepResultsCsv } from './sweep-results.js';

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

/**
 * results.csv's format_bits_per_value: the runtime formats' sides as the runtimes count them, for
 * --kv-format and for a layer map's format_key/format_value alike (llama.cpp: q8_0 is 34 bytes per 32
 * values, 8.5 bits; q4_0 18 bytes per 32, 4.5 bits), transformers' layers and a format layer's full side left out.
 */
describe('a sweep point\'s format bits per value', () => {
  const memoryOf = (kvDtype: KvDtype) => {
    const side = { batch: 1, kvHeads: 2, headDim: 64, dtype: kvDtype };
    const geometry = { key: side, value: side };
    return {
      geometry,
      both: (name: string) => runtimeFormatLayerMemory(name, name, geometry, 100),
      transformers: layerMemory({ geometry, quantizedTokens: 92, fullPrecisionTokens: 8, stores: [], storeBytes: [{ codeBytes: 5888, metadataBytes: 1472 }], workingBytes: 0 }),
    };
  };
  const point = (extensions: CacheExtensions | undefined, perLayer: (LayerMemory | null)[], kvDtype: KvDtype) => ({
    settings: { cacheMode: 'quantized', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, ...(extensions === undefined ? {} : { extensions }) } } as unknown as RecordedEvalSettings,
    memory: { storedBytes: 0, bitsPerValue: 0, total: perLayer[0]!, perLayer },
    model: { kvDtype } as EvalResult['model'],
  });

  it.each(['float32', 'float16'] as const)('a layer map\'s formats beside transformers\' layers (%s KV): the mean over the formats\' sides', (kvDtype) => {
    const { geometry, both, transformers } = memoryOf(kvDtype);
    const layerMap = parseLayerMap('0: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q8_0}\n1: {nbits_key: 4, nbits_value: 4}\n2: {format_key: llama.cpp:q4_0, nbits_value: full}\n', 'map.yaml');
    const keysOnly = runtimeFormatLayerMemory('llama.cpp:q4_0', null, geometry, 100);
    expect(keysOnly.fullPrecisionBytes).toBeGreaterThan(0);
    // K and V of layer 0 at 8.5 bits, K of layer 2 at 4.5, the same number of values each
    expect(formatBitsPerValue(point({ layerMap }, [both('llama.cpp:q8_0'), transformers, keysOnly], kvDtype))).toBeCloseTo((8.5 + 8.5 + 4.5) / 3, 12);
  });

  it('--kv-format: every layer\'s rows; none for transformers\' cache alone', () => {
    const { both, transformers } = memoryOf('float32');
    expect(formatBitsPerValue(point({ kvFormatKey: 'llama.cpp:q8_0', kvFormatValue: 'llama.cpp:q8_0' }, [both('llama.cpp:q8_0'), both('llama.cpp:q8_0')], 'float32'))).toBe(8.5);
    expect(formatBitsPerValue(point({ kvFormatKey: 'llama.cpp:q4_0', kvFormatValue: 'llama.cpp:q8_0' }, [runtimeFormatLayerMemory('llama.cpp:q4_0', 'llama.cpp:q8_0', memoryOf('float32').geometry, 7)], 'float32'))).toBe(6.5);
    expect(formatBitsPerValue(point(undefined, [transformers, transformers], 'float32'))).toBeNull();
    const fullOnly = parseLayerMap('0: full\n1: {nbits_key: 2, nbits_value: 4}\n', 'map.yaml');
    expect(formatBitsPerValue(point({ layerMap: fullOnly }, [null, transformers], 'float32'))).toBeNull();
  });
});

describe('results.csv', () => {
  it('says how each point\'s session computed (logits_rows, prepacked); empty for a record from before it was recorded', () => {
    const old = parseEvalRecord(readFileSync(new URL('../record/test-fixtures/eval-record-v1.json', import.meta.url), 'utf8'));
    const job: EvalResult = { ...old, session: { logitsRows: 'derived', prepacked: false } };
    const csv = sweepResultsCsv({ format: 'kvscope-sweep-results', version: 1, specSha256: 'x', points: 2, rows: [rowFromResult(0, 'a', {}, job), rowFromResult(1, 'b', {}, old)] });
    const [header, first, second] = csv.trim().split(/\r?\n/).map((line) => line.split(','));
    const column = (name: string): number => header!.indexOf(name);
    expect(column('logits_rows')).toBe(column('dequantize') + 1);
    expect([first![column('logits_rows')], first![column('prepacked')]]).toEqual(['derived', '0']);
    expect([second![column('logits_rows')], second![column('prepacked')]]).toEqual(['', '']);
  });
});
