import { useEffect, useRef, type ReactNode } from 'react';
import type { ChartInstance, ChartOption } from '../../charts/echarts-core.js';
import { loadEcharts } from '../../charts/load-echarts.js';

interface LabChartProps {
  readonly option: ChartOption;
  /** data-testid of the chart's host element; `data-points` says how many points it draws */
  readonly testId: string;
  readonly points: number;
  readonly label: string;
  readonly height?: number;
  /** a click on a data item: its data array */
  readonly onItemClick?: (data: unknown) => void;
  /** receives the chart instance (PNG export), null when it goes */
  readonly onChart?: (chart: ChartInstance | null) => void;
}

/**
 * One ECharts chart of the Lab. A sweep's data is a few dozen points that change once a point
 * finishes, so the option is set whenever it changes (no frame loop needed, unlike a live run's
 * streams); ECharts is loaded on first use like the other charts.
 */
export function LabChart({ option, testId, points, label, height = 320, onItemClick, onChart }: LabChartProps): ReactNode {
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<ChartInstance | null>(null);
  const click = useRef(onItemClick);
  click.current = onItemClick;
  const latest = useRef(option);
  latest.current = option;
  const chartListener = useRef(onChart);
  chartListener.current = onChart;

  useEffect(() => {
    const element = host.current;
    if (element === null) return;
    let disposed = false;
    let resize: ResizeObserver | null = null;
    void loadEcharts().then(({ initChart }) => {
      if (disposed) return;
      const instance = initChart(element);
      chart.current = instance;
      instance.setOption(latest.current, { notMerge: true });
      (instance as unknown as { on(event: string, handler: (params: { data: unknown }) => void): void }).on('click', (params) => click.current?.(params.data));
      resize = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(() => instance.resize());
      resize?.observe(element);
      chartListener.current?.(instance);
    });
    return () => {
      disposed = true;
      resize?.disconnect();
      chart.current?.dispose();
      chart.current = null;
      chartListener.current?.(null);
    };
    // The instance lives as long as the element; option changes are applied below.
  }, []);

  useEffect(() => {
    chart.current?.setOption(option, { notMerge: true });
  }, [option]);

  return <div ref={host} className="lab-chart" style={{ height }} role="img" aria-label={label} data-testid={testId} data-points={points} />;
}
