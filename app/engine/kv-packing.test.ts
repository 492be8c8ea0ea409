import { describe, expect, it } from 'vitest';
import type { KvLayerIo } from './decoder-io.js';
import { floatTensor, type HostTensor } from './host-tensor.js';
import { LayerKvPacking } from './kv-packing.js';

const dims = { key: { kvHeads: 2, headDim: 3 }, value: { kvHeads: 2, headDim: 3 } };
const combined: KvLayerIo = {
  layer: 0, packing: 'combined', pastKey: 'past_0', pastValue: 'past_0', presentKey: 'present_0', presentValue: 'present_0',
  dtype: 'float32', keyShape: ['batch', 2, 'past', 3], valueShape: ['batch', 2, 'past', 3],
};
const perLayer: KvLayerIo = { ...combined, packing: 'per-layer', pastKey: 'pk', pastValue: 'pv', presentKey: 'k', presentValue: 'v' };
/** [2, 1, 2 heads, seq, 3]: keys 0…, values 100… */
const present = (seq: number): HostTensor => floatTensor('float32', [2, 1, 2, seq, 3], Float32Array.from({ length: 12 * seq }, (_, i) => (i < 6 * seq ? i : 100 + i - 6 * seq)));

describe('LayerKvPacking: GPT-2\'s combined past at the cache boundary', () => {
  it('splits a present into key and value views of its own buffer (no copy)', () => {
    const packing = new LayerKvPacking(combined, dims, false);
    const output = present(2);
    const { key, value } = packing.read({ present_0: output }, 2);
    expect(key.dims).toEqual([1, 2, 2, 3]);
    expect(key.data.buffer).toBe(output.data.buffer);
    expect([...key.data]).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect([...value.data]).toEqual(Array.from({ length: 12 }, (_, i) => 100 + i));
  });

  it('joins back the halves it split as the present itself, adjacent views as one view, others by one copy', () => {
    const packing = new LayerKvPacking(combined, dims, false);
    const output = present(2);
    const { key, value } = packing.read({ present_0: output }, 2);
    const feeds: Record<string, HostTensor> = {};
    expect(packing.feed(feeds, key, value)).toBe(24 * 4);
    expect(feeds['past_0']).toBe(output);

    // the quantized cache adopted the present: its own views of the same halves
    const adoptedKey = floatTensor('float32', key.dims, new Float32Array(output.data.buffer, 0, 12));
    const adoptedValue = floatTensor('float32', value.dims, new Float32Array(output.data.buffer, 48, 12));
    packing.feed(feeds, adoptedKey, adoptedValue);
    expect(feeds['past_0']!.data.buffer).toBe(output.data.buffer);
    expect(feeds['past_0']!.dims).toEqual([2, 1, 2, 2, 3]);

    // two buffers (dequantized stores after a quantize event): copied into the join buffer
    const separateKey = floatTensor('float32', key.dims, Float32Array.from(key.data));
    const separateValue = floatTensor('float32', value.dims, Float32Array.from(value.data));
    packing.feed(feeds, separateKey, separateValue);
    expect(feeds['past_0']!.data.buffer).not.toBe(output.data.buffer);
    expect([...feeds['past_0']!.data]).toEqual([...output.data]);
    expect(packing.references(feeds['past_0']!.data.buffer)).toBe(true);
  });

  it('feeds an empty pair as an empty [2, 1, heads, 0, head_dim] past', () => {
    const packing = new LayerKvPacking(combined, dims, false);
    const feeds: Record<string, HostTensor> = {};
    const empty = floatTensor('float32', [1, 2, 0, 3], new Float32Array(0));
    packing.feed(feeds, empty, empty);
    expect(feeds['past_0']).toMatchObject({ type: 'float32', dims: [2, 1, 2, 0, 3] });
  });

  it('keeps only the valid rows of a share-buffer present, and refuses a longer one otherwise', () => {
    const output = present(4);
    const { key, value } = new LayerKvPacking(combined, dims, true).read({ present_0: output }, 3);
    // head 0 of the keys: rows 0-2 of its 4
    expect([...key.data.subarray(0, 9)]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect([...key.data.subarray(9, 18)]).toEqual([12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(value.data[0]).toBe(100);
    expect(() => new LayerKvPacking(combined, dims, false).read({ present_0: output }, 3)).toThrow(/expected \[2, 1, 2, 3, 3\]/);
    const perLayerPresent = floatTensor('float32', [1, 2, 4, 3], Float32Array.from({ length: 24 }, (_, i) => i));
    const pair = new LayerKvPacking(perLayer, dims, true).read({ k: perLayerPresent, v: perLayerPresent }, 2);
    expect([...pair.key.data]).toEqual([0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 16, 17]);
  });
});
