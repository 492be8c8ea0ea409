import { describe, expect, it } from 'vitest';
import { formatLayerList } from '../preflight/layer-list.js';
import { parseLayerRange } from './layer-range.js';

describe('parseLayerRange', () => {
  it('reads all, single layers, ranges in three spellings and lists, ascending and each once', () => {
    expect(parseLayerRange('all', 4)).toEqual({ layers: [0, 1, 2, 3] });
    expect(parseLayerRange(' ALL ', 2)).toEqual({ layers: [0, 1] });
    expect(parseLayerRange('3', 8)).toEqual({ layers: [3] });
    expect(parseLayerRange('0-3', 8)).toEqual({ layers: [0, 1, 2, 3] });
    expect(parseLayerRange('0–3', 8)).toEqual({ layers: [0, 1, 2, 3] });
    expect(parseLayerRange('5..6', 8)).toEqual({ layers: [5, 6] });
    expect(parseLayerRange('6, 0-2, 1', 8)).toEqual({ layers: [0, 1, 2, 6] });
  });

  it('reads back what formatLayerList writes', () => {
    const layers = [0, 1, 2, 3, 6, 9, 10, 11, 79];
    expect(parseLayerRange(formatLayerList(layers), 80)).toEqual({ layers });
  });

  it('says why it cannot read a range, naming the model\'s layers', () => {
    expect(parseLayerRange('', 8)).toEqual({ problem: 'Type the layers: 0-3, 8 or all (this model has layers 0–7).' });
    expect(parseLayerRange('0-8', 8)).toEqual({ problem: 'layer 8 does not exist: this model has layers 0–7.' });
    expect(parseLayerRange('3-1', 8)).toEqual({ problem: '3-1 runs backwards; write 1-3.' });
    expect(parseLayerRange('0-3, x', 8)).toEqual({ problem: '"x" is not a layer or a range; write 3, 0-3 or all.' });
    expect(parseLayerRange('-1', 8)).toHaveProperty('problem');
  });
});
