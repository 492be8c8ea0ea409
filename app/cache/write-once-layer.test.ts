import { describe, expect, it } from 'vitest';
import { CacheError } from '../errors.js';
import { runtimeFormat } from '../quant/runtime-formats/registry.js';
import type { FormatGeometry, RuntimeFormat, TensorParams } from '../quant/runtime-formats/types.js';
import { kvTensor, type KvDtype, type KvTensor } from '../tensor/kv-tensor.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from './cache-config.js';
import { extensionProblems } from './extension-problems.js';
import { KvCache } from './kv-cache.js';
import { trackDisposables } from './test-support/disposables.js';
import { randomTensor } from './test-support/tensors.js';
import { WriteOnceLayer } from './write-once-layer.js';

const track = trackDisposables();

/**
 * The reference, written apart from the layer: every row of every update quantized on its own with
 * the format (`encodeRows` of one row), dequantized on its own, and laid out the obvious way
 * (`[batch, heads, seq, headDim]` for the values, token-major for the bytes).
 */
class RowByRowReference {
  readonly rows: Float32Array[][] = []; // [slab][token] dequantized row
  readonly bytes: Uint8Array[][] = []; // [token][slab] stored row
  params: TensorParams | null = null;

  constructor(readonly format: RuntimeFormat, readonly side: 'key' | 'value') {}

  add(x: KvTensor): void {
    const [batch, heads, n, headDim] = x.shape;
    const geometry: FormatGeometry = { headDim, dtype: x.dtype, side: this.side };
    this.params ??= this.format.tensorParams(x.data, geometry, this.format.tensorScale === 'calculated');
    const slabs = batch * heads;
    const rowBytes = this.format.rowBytes(geometry);
    for (let t = 0; t < n; t++) {
      const tokenBytes: Uint8Array[] = [];
      for (let s = 0; s < slabs; s++) {
        const row = x.data.slice((s * n + t) * headDim, (s * n + t + 1) * headDim);
        const bytes = new Uint8Array(rowBytes);
        this.format.encodeRows(row, 1, geometry, this.params, bytes);
        const back = new Float32Array(headDim);
        this.format.decodeRows(bytes, 1, geometry, this.params, back);
        tokenBytes.push(bytes);
        (this.rows[s] ??= []).push(back);
      }
      this.bytes.push(tokenBytes);
    }
  }

  values(): Float32Array {
    return Float32Array.from(this.rows.flatMap((slab) => slab.flatMap((row) => Array.from(row))));
  }

  storedBytes(): Uint8Array {
    return Uint8Array.from(this.bytes.flatMap((token) => token.flatMap((row) => Array.from(row))));
  }
}

/** Bit for bit: the float32 words, so that -0 ≠ 0 and NaN payloads count. */
function bits(x: Float32Array): Uint32Array {
  return new Uint32Array(x.buffer, x.byteOffset, x.length);
}

function scaled(x: KvTensor, factor: number, dtype: KvDtype = x.dtype): KvTensor {
  return kvTensor(x.shape, dtype, x.data.map((v) => v * factor));
}

describe('WriteOnceLayer', () => {
  const cases: readonly (readonly [string, string, KvDtype])[] = [
    ['llama.cpp:q8_0', 'llama.cpp:q8_0', 'float32'],
    ['llama.cpp:q4_0', 'llama.cpp:q4_0', 'float32'],
    ['llama.cpp:q4_0+rot', 'llama.cpp:iq4_nl', 'float32'],
    ['vllm:fp8_e4m3', 'llama.cpp:q8_0', 'float32'],
    ['nvfp4', 'mlx:4bit-g32', 'float16'],
    ['ort-webgpu:q8', 'ort-webgpu:q4', 'float32'],
  ];
  for (const [keyName, valueName, dtype] of cases) {
    it(`feeds attention exactly the rows quantized one by one: K ${keyName}, V ${valueName}, ${dtype}`, () => {
      const keyFormat = runtimeFormat(keyName);
      const valueFormat = runtimeFormat(valueName);
      const layer = track(new WriteOnceLayer(keyFormat, valueFormat));
      const keyRef = new RowByRowReference(keyFormat, 'key');
      const valueRef = new RowByRowReference(valueFormat, 'value');
      for (const [i, n] of [7, 1, 1, 3, 1].entries()) {
        // Outlier-sized keys (×40) in the prefill, smaller later: a per-tensor scale fixed at the prefill shows.
        const key = scaled(randomTensor([1, 2, n, 64], 100 + i), i === 0 ? 40 : 3, dtype);
        const value = scaled(randomTensor([1, 2, n, 64], 200 + i), 1, dtype);
        keyRef.add(key);
        valueRef.add(value);
        const out = layer.update(key, value);
        expect(out.key.shape).toEqual([1, 2, layer.seqLength(), 64]);
        expect(bits(out.key.data)).toEqual(bits(keyRef.values()));
        expect(bits(out.value.data)).toEqual(bits(valueRef.values()));
        expect(layer.storedBytes('key')).toEqual(keyRef.storedBytes());
        expect(layer.storedBytes('value')).toEqual(valueRef.storedBytes());
      }
      expect(layer.seqLength()).toBe(13);
      expect(layer.tensorParams('key')).toEqual(keyRef.params);
      // Write-once: no residual, no flush, no quantize event.
      expect(layer.events).toEqual([]);
      expect(layer.flushCount).toBe(0);
      const geometry = { headDim: 64, dtype, side: 'key' } as const;
      const rowBytes = keyFormat.rowBytes(geometry) + valueFormat.rowBytes({ ...geometry, side: 'value' });
      const memory = layer.memory();
      expect(memory).toMatchObject({
        tokens: 13, quantizedTokens: 13, fullPrecisionTokens: 0, fullPrecisionBytes: 0,
        codeBytes: 2 * 13 * rowBytes, metadataBytes: keyFormat.tensorBytes + valueFormat.tensorBytes, valueCount: 2 * 13 * 128,
      });
      expect(memory.workingBytes).toBeGreaterThanOrEqual(2 * 13 * 128 * 4);
      layer.dispose();
      expect(() => layer.update(randomTensor([1, 2, 1, 64], 1), randomTensor([1, 2, 1, 64], 2))).toThrow(CacheError);
    });
  }

  it('differs from full precision (it quantizes) and NVFP4 calibrates its per-tensor scale on the prefill', () => {
    const layer = track(new WriteOnceLayer(runtimeFormat('nvfp4'), runtimeFormat('llama.cpp:q4_0')));
    const key = scaled(randomTensor([1, 1, 4, 32], 5), 10);
    const out = layer.update(key, randomTensor([1, 1, 4, 32], 6));
    expect(Array.from(out.key.data)).not.toEqual(Array.from(key.data));
    let amax = 0;
    for (const v of key.data) amax = Math.max(amax, Math.abs(v));
    // TensorRT-LLM's global scale: amax / (448 · 6), e4m3's and e2m1's largest values.
    expect(layer.tensorParams('key')!.tensorScale).toBe(Math.fround(amax / (448 * 6)));
    expect(layer.tensorParams('value')!.tensorScale).toBe(1);
    layer.dispose();
  });

  it('--calculate-kv-scales: vLLM\'s k_scale and v_scale from the prefill (amax / 200 and / 100), the same rows as quantized one by one with them', () => {
    const format = runtimeFormat('vllm:fp8_e4m3');
    const layer = track(new WriteOnceLayer(format, format, { calculateKvScales: true }));
    const key = scaled(randomTensor([1, 2, 5, 16], 7), 300);
    const value = scaled(randomTensor([1, 2, 5, 16], 8), 50);
    const amax = (x: KvTensor): number => x.data.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    const out = layer.update(key, value);
    expect(layer.tensorParams('key')!.tensorScale).toBe(Math.fround(amax(key) / 200));
    expect(layer.tensorParams('value')!.tensorScale).toBe(Math.fround(amax(value) / 100));
    const reference = new RowByRowReference(format, 'key');
    reference.params = layer.tensorParams('key');
    reference.add(key);
    expect(bits(out.key.data)).toEqual(bits(reference.values()));
    // Keys of up to 600 saturate e4m3 (max 448) at the default scale 1.0; the calculated scale keeps them.
    const plain = track(new WriteOnceLayer(format, format));
    const saturated = plain.update(key, value).key.data;
    expect(Math.max(...saturated.map(Math.abs))).toBe(448);
    expect(Math.max(...out.key.data.map(Math.abs))).toBeGreaterThan(448);
    layer.dispose();
    plain.dispose();
  });

  it('refuses a head_dim the runtime refuses, with the runtime\'s reason', () => {
    const layer = track(new WriteOnceLayer(runtimeFormat('llama.cpp:q8_0'), runtimeFormat('llama.cpp:q8_0')));
    expect(() => layer.update(randomTensor([1, 2, 3, 8], 1), randomTensor([1, 2, 3, 8], 2)))
      .toThrow(/K cache type q8_0 with block size 32 does not divide n_embd_head_k=8/);
    layer.dispose();
  });
});

describe('--kv-format in the cache settings', () => {
  const settings = (key: string, value: string) => ({ ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { kvFormatKey: key, kvFormatValue: value } });

  it('builds write-once layers for every quantized layer, dynamic ones where the plan says so', () => {
    const cache = track(new KvCache({ plan: ['quantized', 'dynamic'], settings: settings('vllm:fp8_e4m3', 'llama.cpp:q8_0') }));
    expect(cache.layer(0)!.kind).toBe('write-once');
    expect(cache.layer(1)!.kind).toBe('dynamic');
    cache.dispose();
  });

  it('reports unknown formats, half-given formats, clashing knobs and the runtime\'s refusal', () => {
    expect(extensionProblems(settings('llama.cpp:q9_0', 'llama.cpp:q8_0')).map((p) => p.message))
      .toEqual([expect.stringMatching(/--kv-format-key: unknown KV format "llama.cpp:q9_0"/)]);
    expect(extensionProblems({ ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { kvFormatKey: 'nvfp4' } })[0]!.message).toMatch(/only one is given/);
    expect(extensionProblems({ ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { kvFormatKey: 'nvfp4', kvFormatValue: 'nvfp4', sinkTokens: 4 } })[0]!.message)
      .toMatch(/--sink-tokens cannot change/);
    const refused = extensionProblems(settings('llama.cpp:q4_0', 'vllm:fp8_e4m3'), { headDims: { key: 8, value: 8 } });
    expect(refused.map((p) => [p.code, p.origin])).toEqual([['kv-format-refused', 'backend']]);
    expect(refused[0]!.message).toMatch(/^llama_init_from_model: K cache type q4_0 with block size 32 does not divide n_embd_head_k=8/);
    expect(extensionProblems(settings('llama.cpp:q4_0', 'vllm:fp8_e4m3'), { headDims: { key: 64, value: 64 } })).toEqual([]);
    const calculate = (extensions: object) => extensionProblems({ ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions }).map((p) => p.message);
    expect(calculate({ calculateKvScales: true })).toEqual([expect.stringMatching(/--calculate-kv-scales .* but no runtime format is chosen/)]);
    expect(calculate({ kvFormatKey: 'llama.cpp:q8_0', kvFormatValue: 'nvfp4', calculateKvScales: true }))
      .toEqual([expect.stringMatching(/neither llama.cpp:q8_0 nor nvfp4 has a per-tensor scale to calculate/)]);
    expect(calculate({ kvFormatKey: 'llama.cpp:q8_0', kvFormatValue: 'vllm:fp8_e5m2', calculateKvScales: true })).toEqual([]);
  });
});
