import { describe, expect, it } from 'vitest';
import { accuracyMap, retrievalGrid, sampleSeed } from './grid.js';

describe('the depth × length grid', () => {
  const spec = { lengths: [256, 512], depths: [0, 50, 100], samples: 3, seed: 42, hasDepth: true };

  it('makes one cell per length and depth, each with its own derived seeds', () => {
    const cells = retrievalGrid(spec);
    expect(cells.map((cell) => [cell.length, cell.depth])).toEqual([[256, 0], [256, 50], [256, 100], [512, 0], [512, 50], [512, 100]]);
    expect(cells.every((cell) => cell.sampleSeeds.length === 3)).toBe(true);
    const seeds = cells.flatMap((cell) => cell.sampleSeeds);
    expect(new Set(seeds).size).toBe(seeds.length);
    expect(retrievalGrid(spec)).toEqual(cells);
    // a cell's seeds do not depend on the rest of the grid
    const alone = retrievalGrid({ ...spec, lengths: [512], depths: [50] });
    expect(alone[0]!.sampleSeeds).toEqual(cells[4]!.sampleSeeds);
    expect(retrievalGrid({ ...spec, seed: 43 })[0]!.sampleSeeds).not.toEqual(cells[0]!.sampleSeeds);
    expect(cells[0]!.sampleSeeds[1]).toBe(sampleSeed(42, 256, 0, 1));
  });

  it('has one cell per length for tasks without a needle', () => {
    expect(retrievalGrid({ ...spec, hasDepth: false }).map((cell) => [cell.length, cell.depth])).toEqual([[256, null], [512, null]]);
  });

  it('refuses empty, repeated or impossible axes', () => {
    expect(() => retrievalGrid({ ...spec, lengths: [] })).toThrow(/no lengths given/);
    expect(() => retrievalGrid({ ...spec, depths: [50, 50] })).toThrow(/given twice/);
    expect(() => retrievalGrid({ ...spec, depths: [120] })).toThrow(/depth 120 is not a percentage/);
    expect(() => retrievalGrid({ ...spec, lengths: [1.5] })).toThrow(/length 1.5/);
    expect(() => retrievalGrid({ ...spec, samples: 0 })).toThrow(/samples 0/);
  });

  it('averages the samples of each cell into the map', () => {
    const cells = retrievalGrid({ ...spec, depths: [0, 100] });
    const map = accuracyMap(cells, [
      { length: 256, depth: 0, score: 1 }, { length: 256, depth: 0, score: 0 }, { length: 256, depth: 0, score: 0.5 },
      { length: 512, depth: 0, score: 1 },
      { length: 256, depth: 100, score: 0.25 }, { length: 256, depth: 100, score: 0.75 },
    ]);
    expect(map.lengths).toEqual([256, 512]);
    expect(map.depths).toEqual([0, 100]);
    expect(map.accuracy).toEqual([[0.5, 1], [0.5, null]]);
    expect(map.counts).toEqual([[3, 1], [2, 0]]);
    expect(() => accuracyMap(cells, [{ length: 1024, depth: 0, score: 1 }])).toThrow(/outside the grid/);
    expect(() => accuracyMap(cells, [{ length: 256, depth: 0, score: 2 }])).toThrow(/outside \[0, 1\]/);
  });
});
