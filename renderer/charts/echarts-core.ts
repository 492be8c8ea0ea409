import { BarChart, HeatmapChart, LineChart, ScatterChart } from 'echarts/charts';
import { GridComponent, LegendComponent, MarkLineComponent, TooltipComponent, VisualMapComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

/**
 * ECharts through `echarts/core` with only what the workbench draws (toolchain.md §2: the full
 * bundle is 1.3 MB). Unit tests replace this module with a recording fake.
 */
echarts.use([LineChart, BarChart, HeatmapChart, ScatterChart, GridComponent, TooltipComponent, LegendComponent, MarkLineComponent, VisualMapComponent, CanvasRenderer]);

export type ChartInstance = Pick<echarts.ECharts, 'setOption' | 'resize' | 'dispose' | 'getDataURL'>;
export type ChartOption = echarts.EChartsCoreOption;

export function initChart(element: HTMLElement): ChartInstance {
  return echarts.init(element, undefined, { renderer: 'canvas' });
}
