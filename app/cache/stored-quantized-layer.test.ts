import { describe, expect, it } from 'vitest';
import { CacheError } from '../errors.js';
import { quantizerFor } from '../quant/registry.js';
import type { QuantBackend, QuantizedTensor } from '../quant/types.js';
import { float32ToHalfBitsInto, halfBitsToFloat32Into } from '../tensor/float16-bits.js';
import { kvTensor, type KvDtype, type KvTensor } from '../tensor/kv-tensor.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from './cache-config.js';
import { FlushScratch } from './flush-scratch.js';
import { QuantizedLayer } from './quantized-layer.js';
import { StoredQuantizedLayer } from './stored-quantized-layer.js';
import type { KvRows } from './stored-parts.js';
import { firstBitDifference } from './test-support/compare.js';
import { trackDisposables } from './test-support/disposables.js';
import { concatSeq, randomTensor, sliceSeq } from './test-support/tensors.js';

const track = trackDisposables();

function storedSettings(s: QuantizedCacheSettings): ConstructorParameters<typeof StoredQuantizedLayer>[1] {
  return {
    key: { nbits: s.nbits, axis: s.axisKey, groupSize: s.groupSize },
    value: { nbits: s.nbits, axis: s.axisValue, groupSize: s.groupSize },
    residualLength: s.residualLength,
  };
}

function expectSameStore(actual: QuantizedTensor | null, expected: QuantizedTensor | null, what: string): void {
  expect(actual, what).not.toBeNull();
  expect(actual!.shape, what).toEqual(expected!.shape);
  expect(firstBitDifference(actual!.packed, expected!.packed), `${what} packed`).toBe(-1);
  expect(firstBitDifference(actual!.scale, expected!.scale), `${what} scale`).toBe(-1);
  expect(firstBitDifference(actual!.zero, expected!.zero), `${what} zero`).toBe(-1);
}

function toFloat16(x: KvTensor): KvTensor {
  // randomTensor's values are multiples of 1/256 in [-2, 2): exact in binary16
  return kvTensor(x.shape, 'float16', x.data);
}

const CASES: readonly { name: string; settings: QuantizedCacheSettings; dtype: KvDtype; steps: readonly number[] }[] = [
  { name: 'quanto 4-bit axis 0/0, R 5, single tokens', settings: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 16, residualLength: 5 }, dtype: 'float32', steps: Array(13).fill(1) },
  { name: 'quanto 2-bit axis −1/0, R 3, 2-token steps', settings: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, nbits: 2, axisKey: -1, groupSize: 8, residualLength: 3 }, dtype: 'float32', steps: [2, 2, 2, 2, 2, 2] },
  { name: 'hqq 4-bit axis 1/0, R 4, float16', settings: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', axisKey: 1, groupSize: 16, residualLength: 4 }, dtype: 'float16', steps: Array(10).fill(1) },
  { name: 'hqq 8-bit axis 0/1, R 0 (flush every other step), float16', settings: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 8, axisValue: 1, groupSize: 16, residualLength: 0 }, dtype: 'float16', steps: Array(7).fill(1) },
];

describe('StoredQuantizedLayer: QuantizedLayer\'s state machine, holding only the store and the residual', () => {
  for (const c of CASES) {
    it(`${c.name}: the same stores, events and returned tensors as QuantizedLayer, bit for bit`, () => {
      const quantizer = quantizerFor(c.settings.backend as QuantBackend);
      const reference = track(new QuantizedLayer(quantizer, c.settings));
      const stored = track(new StoredQuantizedLayer(quantizer, storedSettings(c.settings)));
      const total = 8 + c.steps.reduce((a, b) => a + b, 0);
      const make = (seed: number): KvTensor => (c.dtype === 'float16' ? toFloat16(randomTensor([1, 2, total, 16], seed)) : randomTensor([1, 2, total, 16], seed));
      const keys = make(11);
      const values = make(12);
      let at = 0;
      for (const n of [8, ...c.steps]) {
        const k = sliceSeq(keys, at, at + n);
        const v = sliceSeq(values, at, at + n);
        at += n;
        const expected = reference.update(k, v);
        const actual = stored.update(k, v);
        expect(firstBitDifference(actual.key.data, expected.key.data), `returned keys after ${at} tokens`).toBe(-1);
        expect(firstBitDifference(actual.value.data, expected.value.data), `returned values after ${at} tokens`).toBe(-1);
        expect(stored.seqLength()).toBe(reference.seqLength());
        expect(stored.events).toEqual(reference.events);
        expectSameStore(stored.stored('key').store, reference.stores.key, `key store after ${at} tokens`);
        expectSameStore(stored.stored('value').store, reference.stores.value, `value store after ${at} tokens`);
        const memory = stored.memory();
        const referenceMemory = reference.memory();
        expect({ ...memory, workingBytes: 0 }).toEqual({ ...referenceMemory, workingBytes: 0 });
      }
      expect(stored.flushCount).toBe(reference.flushCount);
      expect(stored.flushCount).toBeGreaterThan(0);
      reference.dispose();
      stored.dispose();
    });
  }

  it('stores the residual in T as given: float16 rows stay binary16 bits, and `stored` exposes them with the store', () => {
    const quantizer = quantizerFor('quanto');
    const layer = track(new StoredQuantizedLayer(quantizer, storedSettings({ ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 16, residualLength: 8 })));
    const rows = (x: KvTensor): KvRows => {
      const bits = new Uint16Array(x.data.length);
      float32ToHalfBitsInto(x.data, 0, bits, 0, x.data.length);
      return { shape: x.shape, dtype: 'float16', data: bits };
    };
    const all = toFloat16(randomTensor([1, 2, 12, 16], 5));
    layer.append(rows(sliceSeq(all, 0, 10)), rows(sliceSeq(all, 0, 10)));
    expect(layer.stored('key')).toMatchObject({ storeTokens: 10, residualTokens: 0, storeVersion: 1 });
    layer.append(rows(sliceSeq(all, 10, 11)), rows(sliceSeq(all, 10, 11)));
    layer.append(rows(sliceSeq(all, 11, 12)), rows(sliceSeq(all, 11, 12)));
    const part = layer.stored('key');
    expect(part).toMatchObject({ storeTokens: 10, residualTokens: 2, storeVersion: 1 });
    expect(part.residual).toBeInstanceOf(Uint16Array);
    const decoded = new Float32Array(part.residual.length);
    halfBitsToFloat32Into(part.residual as Uint16Array, 0, decoded, 0, decoded.length);
    expect(firstBitDifference(decoded, sliceSeq(all, 10, 12).data)).toBe(-1);
    // 2 bytes a residual value: [1, 2, 2, 16] keys and values
    expect(layer.memory().fullPrecisionBytes).toBe(2 * 2 * 2 * 16 * 2);
    expect(() => layer.append({ shape: [1, 2, 1, 16], dtype: 'float16', data: new Float32Array(32) }, rows(sliceSeq(all, 11, 12)))).toThrow(CacheError);
    layer.dispose();
  });

  it('flushes of different layers share one FlushScratch, which holds one layer\'s history, not all', () => {
    const quantizer = quantizerFor('quanto');
    const scratch = new FlushScratch();
    const settings = storedSettings({ ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 16, residualLength: 2 });
    const layers = [0, 1, 2].map(() => track(new StoredQuantizedLayer(quantizer, settings, scratch)));
    const x = randomTensor([1, 2, 40, 16], 9);
    for (const layer of layers) layer.append({ shape: [1, 2, 30, 16], dtype: 'float32', data: sliceSeq(x, 0, 30).data }, { shape: [1, 2, 30, 16], dtype: 'float32', data: sliceSeq(x, 0, 30).data });
    for (let t = 30; t < 40; t++) {
      for (const layer of layers) {
        const row = sliceSeq(x, t, t + 1).data;
        layer.append({ shape: [1, 2, 1, 16], dtype: 'float32', data: row }, { shape: [1, 2, 1, 16], dtype: 'float32', data: row });
      }
    }
    expect(layers[0]!.flushCount).toBeGreaterThan(0);
    // history + check buffers of one [1, 2, 40, 16] layer (with growth headroom), never three layers' worth
    expect(scratch.capacityBytes).toBeLessThanOrEqual(2 * 1.25 * 2 * 40 * 16 * 4 + 64);
    // the layers themselves hold only residual rows: no history buffer
    for (const layer of layers) expect(layer.memory().workingBytes).toBeLessThan(2 * 2 * 40 * 16 * 4 / 4);
    for (const layer of layers) layer.dispose();
  });

  it('a multi-token append after the prefill equals concatenating it (R large: no flush)', () => {
    const quantizer = quantizerFor('hqq');
    const settings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', axisKey: 1, axisValue: 1, groupSize: 16 };
    const layer = track(new StoredQuantizedLayer(quantizer, storedSettings(settings)));
    const x = randomTensor([1, 2, 20, 16], 3);
    layer.update(sliceSeq(x, 0, 16), sliceSeq(x, 0, 16));
    const out = layer.update(sliceSeq(x, 16, 20), sliceSeq(x, 16, 20));
    const store = layer.stored('key').store!;
    const expected = concatSeq([quantizer.dequantize(store), sliceSeq(x, 16, 20)]);
    expect(firstBitDifference(out.key.data, expected.data)).toBe(-1);
    layer.dispose();
  });
});
