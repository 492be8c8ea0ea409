import { baseOption, categoryAxis, readChartTheme, stepAxis, valueAxis } from './chart-theme.js';
import type { ChartOption } from './echarts-core.js';
import { loadEcharts } from './load-echarts.js';

/** Steps in the warm-up chart's lines: enough for ECharts' stacking, sampling and path code to run. */
const WARM_STEPS = 400;

/**
 * One chart holding every kind the run dashboard draws (stacked areas over steps in two grids, a mark
 * line, scatter, stacked bars per layer, a heatmap with its piecewise scale, legend, tooltip), in the
 * window's theme.
 */
export function warmUpOption(): ChartOption {
  const theme = readChartTheme();
  const steps = new Float64Array(2 * WARM_STEPS);
  for (let i = 0; i < WARM_STEPS; i++) {
    steps[2 * i] = i;
    steps[2 * i + 1] = i * (1 + Math.sin(i / 17));
  }
  const area = (name: string, color: string): Record<string, unknown> => ({
    name, type: 'line', stack: 'kv', showSymbol: false, sampling: 'lttb', data: steps, areaStyle: { color, opacity: 0.55 }, lineStyle: { color, width: 1 },
  });
  const layers = Array.from({ length: 32 }, (_, i) => String(i));
  const cells: [number, number, number][] = [];
  for (let layer = 0; layer < 32; layer++) for (let column = 0; column < 16; column++) cells.push([column, layer, (layer + column) / 48]);
  return {
    ...baseOption(theme),
    grid: [{ left: 56, right: 18, top: 40, height: 120 }, { left: 56, right: 18, top: 200, height: 120 }, { left: 56, right: 120, top: 360, height: 200 }],
    xAxis: [{ ...stepAxis(theme, WARM_STEPS), gridIndex: 0 }, { ...categoryAxis(theme, 'layer', layers), gridIndex: 1 }, { ...categoryAxis(theme, 'event', layers.slice(0, 16)), gridIndex: 2 }],
    yAxis: [{ ...valueAxis(theme, 'KV'), gridIndex: 0 }, { ...valueAxis(theme, 'bytes'), gridIndex: 1 }, { ...categoryAxis(theme, 'layer', layers), gridIndex: 2 }],
    visualMap: {
      type: 'piecewise', seriesIndex: 5, right: 2, top: 'middle',
      pieces: theme.heat.map((color, i) => ({ gte: i / 5, lt: (i + 1) / 5, color, label: `${i / 5}` })),
    },
    series: [
      area('codes', theme.codes),
      { ...area('scale/zero', theme.metadata), markLine: { silent: true, symbol: 'none', data: [{ xAxis: 100 }, { xAxis: 200 }] } },
      { name: 'differs', type: 'scatter', data: [[10, 5], [20, 8]], symbol: 'triangle' },
      { name: 'K', type: 'bar', stack: 'layer', xAxisIndex: 1, yAxisIndex: 1, data: layers.map(Number) },
      { name: 'V', type: 'bar', stack: 'layer', xAxisIndex: 1, yAxisIndex: 1, data: layers.map((_, i) => (i % 3 === 0 ? '-' : i)) },
      { name: 'error', type: 'heatmap', xAxisIndex: 2, yAxisIndex: 2, data: cells },
    ],
  };
}

/**
 * ECharts' first chart costs several times what the next ones do (its chunk evaluated, its code
 * compiled, text measured): paid on a run's first frames, that made the longest frame of the whole
 * stream (issue 25, point 9). Drawn once while the window is idle, off screen, it is paid before Run.
 */
export function warmChartsWhenIdle(): void {
  const warm = (): void => {
    void loadEcharts().then(({ warmUp }) => warmUp(warmUpOption()));
  };
  if (typeof requestIdleCallback === 'function') requestIdleCallback(warm, { timeout: 2000 });
  else setTimeout(warm, 1000);
}
