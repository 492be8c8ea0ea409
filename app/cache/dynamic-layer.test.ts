import { describe, expect, it } from 'vitest';
import { CacheError } from '../errors.js';
import { kvTensor, type KvTensor } from '../tensor/kv-tensor.js';
import { DynamicLayer } from './dynamic-layer.js';
import { bitsPerValue } from './layer-memory.js';
import { trackDisposables } from './test-support/disposables.js';
import { concatSeq, randomTensor } from './test-support/tensors.js';

const track = trackDisposables();

describe('DynamicLayer', () => {
  it('returns the whole history, = torch.cat of every update, keys and values apart', () => {
    const layer = track(new DynamicLayer());
    const keys: KvTensor[] = [];
    const values: KvTensor[] = [];
    for (const [i, n] of [6, 1, 1, 3, 1].entries()) {
      const k = randomTensor([1, 2, n, 8], 10 + i);
      const v = randomTensor([1, 2, n, 4], 20 + i); // value head dim differs (MLA-style)
      keys.push(k);
      values.push(v);
      const out = layer.update(k, v);
      expect(Array.from(out.key.data)).toEqual(Array.from(concatSeq(keys).data));
      expect(Array.from(out.value.data)).toEqual(Array.from(concatSeq(values).data));
      expect(out.key.shape).toEqual([1, 2, layer.seqLength(), 8]);
      expect(out.value.shape).toEqual([1, 2, layer.seqLength(), 4]);
    }
    expect(layer.seqLength()).toBe(12);
    expect(layer.events).toEqual([]);
    expect(layer.flushCount).toBe(0);
    layer.dispose();
  });

  it('adopts a caller\'s cat(history, new) with the same result, and refuses one that is not', () => {
    const plain = track(new DynamicLayer());
    const adopting = track(new DynamicLayer());
    let previous: [KvTensor, KvTensor] | null = null;
    for (const [i, n] of [5, 1, 2, 1].entries()) {
      const k = randomTensor([1, 2, n, 8], 30 + i);
      const v = randomTensor([1, 2, n, 4], 40 + i);
      const expected = plain.update(k, v);
      const concatenated = previous === null ? { key: k.data, value: v.data } : { key: concatSeq([previous[0], k]).data, value: concatSeq([previous[1], v]).data };
      const actual = adopting.update(k, v, concatenated);
      expect(Array.from(actual.key.data)).toEqual(Array.from(expected.key.data));
      expect(Array.from(actual.value.data)).toEqual(Array.from(expected.value.data));
      previous = [kvTensor(actual.key.shape, 'float32', Float32Array.from(actual.key.data)), kvTensor(actual.value.shape, 'float32', Float32Array.from(actual.value.data))];
    }
    const k = randomTensor([1, 2, 1, 8], 50);
    const v = randomTensor([1, 2, 1, 4], 51);
    const bad = { key: concatSeq([previous![0], k]).data, value: concatSeq([previous![1], v]).data };
    bad.key[bad.key.length - 1]! += 1;
    expect(() => adopting.update(k, v, bad)).toThrow(CacheError);
    expect(adopting.seqLength()).toBe(9);
    plain.dispose();
    adopting.dispose();
  });

  it('counts its bytes as full-precision values in T against the fp16 and fp32 baselines', () => {
    const layer = track(new DynamicLayer());
    expect(layer.memory().totalBytes).toBe(0);
    layer.update(randomTensor([2, 4, 10, 16], 1, 'float16'), randomTensor([2, 4, 10, 16], 2, 'float16'));
    const m = layer.memory();
    // 2 (K, V) · B·H·S·D = 2·2·4·10·16 = 2560 values
    expect(m.valueCount).toBe(2560);
    expect(m.fullPrecisionBytes).toBe(2560 * 2);
    expect(m.totalBytes).toBe(5120);
    expect(m.fp16BaselineBytes).toBe(5120);
    expect(m.fp32BaselineBytes).toBe(10240);
    expect(m.codeBytes + m.metadataBytes).toBe(0);
    expect(bitsPerValue(m)).toBe(16);
    expect(m.workingBytes).toBeGreaterThanOrEqual(2560 * 4);
    layer.dispose();
  });

  it('refuses updates that do not fit the cache, with what was expected', () => {
    const layer = track(new DynamicLayer());
    layer.update(randomTensor([1, 2, 3, 8], 1), randomTensor([1, 2, 3, 8], 2));
    expect(() => layer.update(randomTensor([1, 2, 1, 4], 3), randomTensor([1, 2, 1, 8], 4)))
      .toThrow(/key update of shape \[1, 2, 1, 4\] float32 does not match this layer's cache \[1, 2, seq, 8\] float32/);
    expect(() => layer.update(randomTensor([1, 2, 1, 8], 3, 'float16'), randomTensor([1, 2, 1, 8], 4, 'float16'))).toThrow(CacheError);
    expect(() => layer.update(randomTensor([1, 2, 2, 8], 3), randomTensor([1, 2, 1, 8], 4)))
      .toThrow(/same number of new tokens: key has 2, value has 1/);
    expect(layer.seqLength()).toBe(3); // refused updates change nothing
    layer.dispose();
  });

  it('is unusable after dispose', () => {
    const layer = track(new DynamicLayer());
    const k = kvTensor([1, 1, 1, 2], 'float32', new Float32Array([1, 2]));
    layer.update(k, k);
    layer.dispose();
    expect(layer.disposed).toBe(true);
    expect(layer.seqLength()).toBe(0);
    expect(() => layer.update(k, k)).toThrow(/disposed/);
  });
});
