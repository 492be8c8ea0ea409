import type { ChartInstance, ChartOption } from '../charts/echarts-core.js';

/** A stand-in for an ECharts instance that records what it was given (jsdom has no canvas). */
export interface RecordingChart extends ChartInstance {
  readonly options: ChartOption[];
  disposed: boolean;
}

export const createdCharts: RecordingChart[] = [];

export function recordingChart(): RecordingChart {
  const chart: RecordingChart = {
    options: [],
    disposed: false,
    setOption: ((option: ChartOption) => {
      chart.options.push(option);
    }) as ChartInstance['setOption'],
    resize: (() => undefined) as ChartInstance['resize'],
    dispose: () => {
      chart.disposed = true;
    },
    getDataURL: (() => 'data:image/png;base64,') as ChartInstance['getDataURL'],
    getOption: (() => chart.options.at(-1) ?? {}) as unknown as ChartInstance['getOption'],
    getWidth: () => 600,
    getHeight: () => 300,
  };
  createdCharts.push(chart);
  return chart;
}
