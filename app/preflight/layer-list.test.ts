import { describe, expect, it } from 'vitest';
import { describeKinds, formatLayerList } from './layer-list.js';

describe('formatLayerList', () => {
  it('writes runs as ranges, sorted and without duplicates', () => {
    expect(formatLayerList([0, 1, 2, 3, 4, 6, 7, 12])).toBe('0-4, 6-7, 12');
    expect(formatLayerList([5, 3, 3, 1])).toBe('1, 3, 5');
    expect(formatLayerList([])).toBe('');
  });

  it('groups per-layer kinds in order of first appearance', () => {
    expect(describeKinds([{ index: 0, kind: 'conv' }, { index: 2, kind: 'sliding_attention' }, { index: 1, kind: 'conv' }]))
      .toBe('conv at 0-1; sliding_attention at 2');
  });
});
