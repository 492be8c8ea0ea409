import { describe, expect, it } from 'vitest';
import type { KvGeometry } from './kv-geometry.js';
import { SeqBuffer } from './seq-buffer.js';
import { concatSeq, randomTensor } from './test-support/tensors.js';
import type { KvTensor } from '../tensor/kv-tensor.js';

const geometry: KvGeometry = { batch: 2, kvHeads: 3, headDim: 4, dtype: 'float32' };

describe('SeqBuffer', () => {
  it('matches torch.cat along seq over growing and in-place appends, 0-token ones included', () => {
    const buffer = new SeqBuffer(geometry);
    const parts: KvTensor[] = [];
    const sizes = [5, 1, 0, 1, 3, 1, 1, 7, 1, 1, 1, 2, 9, 1];
    sizes.forEach((n, i) => {
      const part = randomTensor([2, 3, n, 4], 100 + i);
      parts.push(part);
      buffer.append(part.data, n);
      const expected = concatSeq(parts);
      const actual = buffer.tensor();
      expect(actual.shape).toEqual(expected.shape);
      expect(Array.from(actual.data)).toEqual(Array.from(expected.data));
    });
  });

  it('grows by doubling, so single-token appends reallocate O(log n) times and otherwise reuse the buffer', () => {
    const buffer = new SeqBuffer(geometry);
    const buffers = new Set<ArrayBufferLike>();
    for (let step = 0; step < 1000; step++) {
      buffer.append(new Float32Array(2 * 3 * 4).fill(step), 1);
      buffers.add(buffer.view().buffer);
    }
    expect(buffers.size).toBe(Math.ceil(Math.log2(1000)) + 1); // capacities 1, 2, 4, …, 1024 tokens
    expect(buffer.capacityBytes).toBe(1024 * 2 * 3 * 4 * 4);
    expect(buffer.seqLength).toBe(1000);
    // The last token of the last slab is in place after all the moves.
    expect(buffer.view()[buffer.view().length - 1]).toBe(999);
  });

  it('adopt takes over a buffer without copying and hands back the previous one', () => {
    const buffer = new SeqBuffer(geometry);
    buffer.append(randomTensor([2, 3, 2, 4], 1).data, 2);
    const held = buffer.view().buffer;
    const storage = new Float32Array(2 * 3 * 8 * 4);
    storage.set(randomTensor([2, 3, 3, 4], 2).data);
    const previous = buffer.adopt(storage, 3);
    expect(previous.buffer).toBe(held);
    expect(buffer.view().buffer).toBe(storage.buffer);
    expect(Array.from(buffer.view())).toEqual(Array.from(randomTensor([2, 3, 3, 4], 2).data));
    expect(() => buffer.adopt(new Float32Array(10), 3)).toThrow(RangeError);
  });

  it('adoptConcatenation takes a caller\'s cat(history, new) as is, never writes into it and never hands it out', () => {
    const buffer = new SeqBuffer(geometry);
    const first = randomTensor([2, 3, 2, 4], 1);
    buffer.append(first.data, 2);
    const next = randomTensor([2, 3, 1, 4], 2);
    const concatenated = concatSeq([first, next]).data;
    const pristine = Float32Array.from(concatenated);
    buffer.adoptConcatenation(concatenated, 3);
    expect(buffer.view().buffer).toBe(concatenated.buffer);
    const after = randomTensor([2, 3, 1, 4], 3);
    buffer.append(after.data, 1);
    expect(Array.from(concatenated)).toEqual(Array.from(pristine));
    expect(Array.from(buffer.view())).toEqual(Array.from(concatSeq([first, next, after]).data));
    buffer.adoptConcatenation(concatSeq([first, next, after, next]).data, 5);
    expect(buffer.adopt(new Float32Array(2 * 3 * 5 * 4), 5).length).toBe(0);
    expect(() => buffer.adoptConcatenation(new Float32Array(10), 3)).toThrow(RangeError);
  });

  it('dispose drops the storage', () => {
    const buffer = new SeqBuffer(geometry);
    buffer.append(randomTensor([2, 3, 4, 4], 3).data, 4);
    buffer.dispose();
    expect(buffer.capacityBytes).toBe(0);
    expect(buffer.seqLength).toBe(0);
  });
});
