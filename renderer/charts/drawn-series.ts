/** Kept apart from echarts-core.ts so that the browser e2e (typed without the DOM) can import the type. */

/** One drawn series as the chart resolved it: what the colour test of the built UI reads. */
export interface DrawnSeries {
  readonly chart: string;
  readonly name: string;
  readonly type: string;
  /** the colour ECharts paints the series with (its data's visual style) */
  readonly color: string;
  /** how many of its data items hold finite numbers (a series with none draws nothing and needs no swatch) */
  readonly drawnPoints: number;
  /** whether the chart's legend lists the series (it then draws a swatch in that colour) */
  readonly inLegend: boolean;
  /** the colours of the chart's visualMap, for charts coloured by value (heatmaps) */
  readonly visualMapColors: readonly string[];
}
