import { describe, expect, it } from 'vitest';
import type { RunBuffers } from '../controller/live-buffers.js';
import { RunMetrics } from '../metrics/run-metrics.js';
import { TextStream } from '../metrics/text-stream.js';
import { readChartTheme } from './chart-theme.js';
import { PROCESS_MEMORY_CHART } from './process-memory-chart.js';
import { KEY_ERROR_HEATMAP, KV_LAYERS_CHART, KV_MEMORY_CHART, LATEST_ERROR_CHART, REFERENCE_CHART, SPEED_CHART, STEP_TIME_CHART, VALUE_ERROR_HEATMAP } from './run-charts.js';
import { warmUpOption } from './warm-charts.js';

type Series = { type: string; stack?: string; areaStyle?: unknown; markLine?: unknown; data: unknown };

describe('the charts warm-up', () => {
  it('draws every kind the run dashboard draws, with data, so that its first render pays what theirs would', () => {
    const option = warmUpOption() as { series: Series[]; grid: unknown[]; visualMap: { type: string }; legend: unknown; tooltip: unknown };
    const kinds = new Set(option.series.map((series) => series.type));
    for (const kind of ['line', 'bar', 'heatmap', 'scatter']) expect(kinds, kind).toContain(kind);
    expect(option.series.some((series) => series.type === 'line' && series.stack !== undefined && series.areaStyle !== undefined), 'stacked areas').toBe(true);
    expect(option.series.some((series) => series.markLine !== undefined), 'mark lines').toBe(true);
    expect(option.series.some((series) => series.type === 'bar' && series.stack !== undefined), 'stacked bars').toBe(true);
    expect(option.visualMap.type).toBe('piecewise');
    expect(option.grid.length).toBeGreaterThanOrEqual(2);
    expect(option.legend).toBeDefined();
    expect(option.tooltip).toBeDefined();
    for (const series of option.series) expect((series.data as ArrayLike<unknown>).length, `${series.type} has data`).toBeGreaterThan(0);
  });

  it('covers every series kind of the run dashboard\'s charts as they are written (a new kind there must join the warm-up)', () => {
    const metrics = new RunMetrics({ layerCount: 4, expectedSteps: 16, residualLength: 8, kvBytesPerValue: 4 });
    const buffers: RunBuffers = { metrics, text: new TextStream(), layerKinds: [], quantizedLayers: [true, true, true, true], modelLabel: 'test' } as unknown as RunBuffers;
    const context = { buffers, theme: readChartTheme(), scale: 'linear' as const };
    const charts = [KV_MEMORY_CHART, PROCESS_MEMORY_CHART, KV_LAYERS_CHART, LATEST_ERROR_CHART, KEY_ERROR_HEATMAP, VALUE_ERROR_HEATMAP, SPEED_CHART, STEP_TIME_CHART, REFERENCE_CHART];
    const dashboardKinds = new Set(charts.flatMap((chart) => ((chart.create().setup(context) as { series: Series[] }).series).map((series) => series.type)));
    const warmKinds = new Set((warmUpOption() as { series: Series[] }).series.map((series) => series.type));
    expect([...dashboardKinds].filter((kind) => !warmKinds.has(kind))).toEqual([]);
    expect(dashboardKinds.size).toBeGreaterThanOrEqual(4);
  });
});
