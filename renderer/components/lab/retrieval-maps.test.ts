import { describe, expect, it } from 'vitest';
import type { SweepRow } from '../../../app/lab/sweep-results.js';
import { readChartTheme } from '../../charts/chart-theme.js';
import { retrievalMapGroups, retrievalMapOption } from './retrieval-maps.js';

function row(name: string, nbits: number, accuracy: (number | null)[][], reference: (number | null)[][]): SweepRow {
  const map = { lengths: [256, 1024], depths: [0, 50, 100], accuracy };
  return {
    index: nbits, name, status: 'ok', reason: null, options: { nbits, task: 'passkey' },
    settings: { cacheMode: 'quantized', backend: 'quanto', nbits, axisKey: 0, axisValue: 0, groupSize: 64, residualLength: 128, layers: 'all', parts: 'both' },
    result: null,
    retrieval: { task: 'passkey', metric: 'passkey', accuracy: 0, accuracyReference: 1, samples: 6, kvBytesLongest: 1, map, referenceMap: { ...map, accuracy: reference } },
  };
}

describe('the Lab\'s depth × length retrieval maps', () => {
  const full = [[1, 1], [1, 1], [1, 1]];
  const rows: SweepRow[] = [
    row('nbits-2', 2, [[0, 0.5], [0, null], [1, 0]], full),
    { index: 9, name: 'nbits-3', status: 'failed', reason: 'no', options: { nbits: 3 }, settings: null, result: null },
    row('nbits-4', 4, full, [[1, 1], [1, 1], [0.5, 1]]),
  ];

  it('gives one map per measured retrieval point, with the dynamic cache\'s and their difference cell by cell', () => {
    const groups = retrievalMapGroups(rows);
    expect(groups.map((group) => group.name)).toEqual(['nbits-2', 'nbits-4']);
    expect(groups[0]!.label).toBe('quanto 2-bit g64 R128 axes 0/0');
    expect(groups[0]!.difference.accuracy).toEqual([[-1, -0.5], [-1, null], [0, -1]]);
    expect(groups[1]!.difference.accuracy).toEqual([[0, 0], [0, 0], [0.5, 0]]);
    expect(groups[0]!.difference.lengths).toEqual([256, 1024]);
  });

  it('draws lengths across and depths down, leaving out empty cells, on a fixed colour range', () => {
    const [two] = retrievalMapGroups(rows);
    const option = retrievalMapOption(two!.map, 'accuracy', readChartTheme()) as {
      xAxis: { data: string[] }; yAxis: { data: string[] }; visualMap: { min: number; max: number }; series: { data: number[][] }[];
    };
    expect(option.xAxis.data).toEqual(['256', '1024']);
    expect(option.yAxis.data).toEqual(['0 %', '50 %', '100 %']);
    expect(option.series[0]!.data).toEqual([[0, 0, 0], [1, 0, 0.5], [0, 1, 0], [0, 2, 1], [1, 2, 0]]);
    expect([option.visualMap.min, option.visualMap.max]).toEqual([0, 1]);
    const difference = retrievalMapOption(two!.difference, 'difference', readChartTheme()) as { visualMap: { min: number } };
    expect(difference.visualMap.min).toBe(-1);
  });
});
