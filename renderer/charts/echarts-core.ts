import { BarChart, HeatmapChart, LineChart, ScatterChart } from 'echarts/charts';
import { GridComponent, LegendComponent, MarkLineComponent, TooltipComponent, VisualMapComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer, SVGRenderer } from 'echarts/renderers';
import type { DrawnSeries } from './drawn-series.js';

/**
 * ECharts through `echarts/core` with only what the workbench draws (toolchain.md §2: the full
 * bundle is 1.3 MB). Unit tests replace this module with a recording fake.
 */
echarts.use([LineChart, BarChart, HeatmapChart, ScatterChart, GridComponent, TooltipComponent, LegendComponent, MarkLineComponent, VisualMapComponent, CanvasRenderer, SVGRenderer]);

export type ChartInstance = Pick<echarts.ECharts, 'setOption' | 'resize' | 'dispose' | 'getDataURL' | 'getOption' | 'getWidth' | 'getHeight'>;
export type ChartOption = echarts.EChartsCoreOption;

export function initChart(element: HTMLElement): ChartInstance {
  return echarts.init(element, undefined, { renderer: 'canvas' });
}

/**
 * Lays `option` out once, off screen, and lets it go (charts/warm-charts.ts says why). Through the
 * server-side SVG renderer, as the exports: option merging, layout, axes, legend and text measuring
 * are the renderer-independent bulk of a first chart's cost, and the whole draw is synchronous, so
 * nothing of it is left to paint on a later frame of a chart already disposed of.
 */
export function warmUp(option: ChartOption): void {
  const chart = echarts.init(null, undefined, { renderer: 'svg', ssr: true, width: 640, height: 600 });
  try {
    chart.setOption(option, { notMerge: true });
    chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

/**
 * A chart's option drawn again as SVG, off screen (ECharts' server-side SVG rendering, which needs
 * no element): vector output for a figure, at the size the chart has on screen.
 */
export function renderOptionSvg(option: ChartOption, width: number, height: number): string {
  const chart = echarts.init(null, undefined, { renderer: 'svg', ssr: true, width, height });
  try {
    chart.setOption({ ...option, animation: false }, { notMerge: true });
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}


interface ResolvedModel {
  getSeriesCount(): number;
  getSeriesByIndex(index: number): { name: string; subType: string; getData(): { getVisual(key: 'style'): { fill?: unknown; stroke?: unknown }; count(): number; getValues(index: number): unknown[] } };
  getComponent(type: string, index?: number): { getData?(): { get(key: string): unknown }[]; get(key: string): unknown } | undefined;
}

/**
 * Every chart on the page with its series as drawn, read through `getInstanceByDom`. Exposed on the
 * window (`__kvscopeDrawnSeries`) so the browser e2e checks colours in the built bundle, where the
 * minified CSS once gave `#8e47NaN`; it reads, changes nothing, and costs nothing until called.
 */
export function drawnSeries(root: ParentNode = document): DrawnSeries[] {
  const result: DrawnSeries[] = [];
  for (const element of root.querySelectorAll<HTMLElement>('[_echarts_instance_]')) {
    const instance = echarts.getInstanceByDom(element);
    if (instance === undefined) continue;
    const model = (instance as unknown as { getModel(): ResolvedModel }).getModel();
    const legend = model.getComponent('legend');
    const legendNames = legend?.getData?.().map((item) => String(item.get('name'))) ?? null;
    const legendShown = legend !== undefined && legend.get('show') !== false;
    const visualMap = model.getComponent('visualMap');
    const inRange = visualMap?.get('inRange') as { color?: unknown } | undefined;
    const visualMapColors = Array.isArray(inRange?.color) ? inRange.color.map(String) : [];
    const chart = element.dataset['testid'] ?? element.closest<HTMLElement>('[data-testid]')?.dataset['testid'] ?? '';
    for (let i = 0; i < model.getSeriesCount(); i++) {
      const series = model.getSeriesByIndex(i);
      const data = series.getData();
      const style = data.getVisual('style');
      let drawnPoints = 0;
      for (let item = 0; item < data.count(); item++) if (data.getValues(item).every((v) => typeof v === 'number' && Number.isFinite(v))) drawnPoints++;
      const paint = series.subType === 'line' ? style.stroke ?? style.fill : style.fill ?? style.stroke;
      result.push({
        chart, name: series.name, type: series.subType, color: typeof paint === 'string' ? paint : JSON.stringify(paint ?? null), drawnPoints,
        inLegend: legendShown && (legendNames === null || legendNames.includes(series.name)), visualMapColors,
      });
    }
  }
  return result;
}

if (typeof window !== 'undefined') (window as unknown as { __kvscopeDrawnSeries?: typeof drawnSeries }).__kvscopeDrawnSeries = drawnSeries;
