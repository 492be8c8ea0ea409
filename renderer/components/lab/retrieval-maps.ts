import type { RetrievalMapJson } from '../../../app/lab/sweep-folder.js';
import type { SweepRow } from '../../../app/lab/sweep-results.js';
import type { ChartTheme } from '../../charts/chart-theme.js';
import type { ChartOption } from '../../charts/echarts-core.js';
import { pointLabel } from './lab-metrics.js';

/** One configuration of a retrieval sweep: its depth × length map, the dynamic cache's, and their difference. */
export interface RetrievalMapGroup {
  readonly name: string;
  readonly label: string;
  readonly task: string;
  readonly map: RetrievalMapJson;
  readonly referenceMap: RetrievalMapJson;
  /** the point's accuracy minus the full-precision dynamic cache's, cell by cell (null where either has none) */
  readonly difference: RetrievalMapJson;
}

const TASK_KEYS = new Set(['task', 'lengths', 'depths', 'samples', 'seed', 'max-new-tokens']);

/** The maps of a sweep's retrieval points, one per configuration (point), in the table's order; other rows are skipped. */
export function retrievalMapGroups(rows: readonly SweepRow[]): RetrievalMapGroup[] {
  return rows.flatMap((row) => {
    const r = row.retrieval;
    if (row.status !== 'ok' || r === undefined) return [];
    const accuracy = r.map.accuracy.map((cells, i) => cells.map((value, j) => {
      const base = r.referenceMap.accuracy[i]?.[j] ?? null;
      return value === null || base === null ? null : value - base;
    }));
    // the task's own keys are the same map's axes, not the configuration: left out of its label
    const options = Object.fromEntries(Object.entries(row.options).filter(([key]) => !TASK_KEYS.has(key)));
    return [{ name: row.name, label: pointLabel({ ...row, options }), task: r.task, map: r.map, referenceMap: r.referenceMap, difference: { ...r.map, accuracy } }];
  });
}

export type RetrievalMapMode = 'accuracy' | 'difference';

/**
 * The classic depth × length map: lengths across, depths down (0 % on top), each cell's accuracy (or
 * its difference to full precision) as colour and number. The colour range is fixed (0–1, or −1–+1),
 * so maps of several configurations colour the same number alike. `data[i]` is [length index, depth index, value].
 */
export function retrievalMapOption(map: RetrievalMapJson, mode: RetrievalMapMode, theme: ChartTheme): ChartOption {
  const signed = mode === 'difference';
  const data = map.accuracy.flatMap((cells, depth) => cells.flatMap((value, length) => (value === null ? [] : [[length, depth, value]])));
  const text = (value: number): string => (signed && value >= 0 ? '+' : '') + value.toFixed(2);
  const depthName = (depth: number | null): string => (depth === null ? 'all' : `${depth} %`);
  return {
    backgroundColor: 'transparent',
    animation: false,
    textStyle: { fontFamily: theme.fontFamily, color: theme.text },
    grid: { left: 72, right: 96, top: 16, bottom: 48 },
    tooltip: {
      formatter: (params: { data: [number, number, number] }) =>
        `length ${map.lengths[params.data[0]]}, depth ${depthName(map.depths[params.data[1]] ?? null)}: ${signed ? 'accuracy − dynamic' : 'accuracy'} ${text(params.data[2])}`,
    },
    xAxis: { type: 'category', name: 'length (tokens)', nameLocation: 'middle', nameGap: 28, data: map.lengths.map(String), axisLabel: { color: theme.muted }, nameTextStyle: { color: theme.muted } },
    yAxis: { type: 'category', name: 'depth', inverse: true, data: map.depths.map(depthName), axisLabel: { color: theme.muted }, nameTextStyle: { color: theme.muted } },
    visualMap: {
      min: signed ? -1 : 0, max: 1, calculable: false, orient: 'vertical', right: 8, top: 'middle', dimension: 2,
      // accuracy: the ramp's intense end for failure; a difference: red for a loss, the background for none, blue for a gain
      inRange: { color: signed ? ['#b2182b', '#f7f7f7', '#2166ac'] : [...theme.heat].reverse() },
      text: signed ? ['+1', '−1'] : ['1', '0'], textStyle: { color: theme.muted },
    },
    series: [{
      type: 'heatmap', data,
      label: { show: true, formatter: (params: { data: [number, number, number] }) => text(params.data[2]), color: '#111', textBorderColor: '#fff', textBorderWidth: 2, fontSize: 11 },
    }],
  };
}
