/**
 * Option pieces shared by the run and comparison charts, so that each chart spells out only what is
 * its own (names, colours, data, units) and the common look cannot drift between the two dashboards.
 */
import { formatError } from '../format/units.js';
import type { ChartContext, ChartDrawer } from './chart-spec.js';
import { baseOption, stepAxis, valueAxis, type ChartTheme } from './chart-theme.js';
import type { ChartOption } from './echarts-core.js';
import { stepTooltip } from './tooltip.js';

type Option = Record<string, unknown>;

/** baseOption, with its tooltip extended rather than replaced (keeping the shared styling). */
export function withTooltip(theme: ChartTheme, extra: Option): Option {
  const base = baseOption(theme);
  return { ...base, tooltip: { ...(base['tooltip'] as object), ...extra } };
}

/**
 * The frame of a chart over steps: tooltip lines with their unit, and the step axis. The unit may be
 * a getter, for charts that learn it only once the first steps are in.
 */
export function stepChartBase(theme: ChartTheme, lastStep: number, unit: string | (() => string)): Option {
  return { ...withTooltip(theme, { formatter: stepTooltip(typeof unit === 'string' ? () => unit : unit) }), xAxis: stepAxis(theme, lastStep) };
}

/**
 * Per-layer bar charts shade the whole layer column, and say `missing` for layers without a value
 * (no KV cache, not quantized) instead of printing ECharts' '-' placeholder.
 */
export function layerBarTooltip(theme: ChartTheme, format: (value: number) => string, missing: string): Option {
  return withTooltip(theme, { axisPointer: { type: 'shadow' }, valueFormatter: (v: unknown) => (typeof v === 'number' ? format(v) : missing) });
}

export function errorBarTooltip(theme: ChartTheme): Option {
  return layerBarTooltip(theme, formatError, 'not quantized');
}

/** Relative errors span decades, so the axis labels use the same formatting as the tooltips. */
export function errorAxis(theme: ChartTheme, name: string): Option {
  return valueAxis(theme, name, { min: 0, axisLabel: { color: theme.muted, fontSize: 10, formatter: (v: number) => formatError(v) } });
}

/** Per-layer errors as bar data: NaN (never quantized) becomes ECharts' empty value. */
export function errorBars(errors: Float64Array): (number | string)[] {
  return Array.from(errors, (v) => (Number.isNaN(v) ? '-' : v));
}

export type LineExtra = { width?: number; lineStyle?: Option } & Option;

/**
 * A line over steps, thin and without symbols (thousands of points); `lineStyle` adds to the width
 * and colour rather than replacing them, and the rest goes into the series as given (`areaStyle`,
 * `stack`, `data`, `yAxisIndex`, …).
 */
export function lineSeries(name: string, color: string, { width = 1.5, lineStyle = {}, ...extra }: LineExtra = {}): Option {
  return { name, type: 'line', showSymbol: false, sampling: 'lttb', data: [], lineStyle: { width, color, ...lineStyle }, itemStyle: { color }, emphasis: { disabled: true }, ...extra };
}

/** What one update drew: the option, and how many data points it holds. */
export interface Drawn {
  readonly option: ChartOption;
  readonly points: number;
}

/** A drawer whose update returns its point count along with the option, instead of each chart keeping a counter. */
export function countingDrawer(parts: { setup(context: ChartContext): ChartOption; update(context: ChartContext): Drawn | null; describe?(): string }): ChartDrawer {
  let points = 0;
  return {
    points: () => points,
    ...(parts.describe === undefined ? {} : { describe: parts.describe }),
    setup: (context) => parts.setup(context),
    update(context) {
      const drawn = parts.update(context);
      if (drawn === null) return null;
      points = drawn.points;
      return drawn.option;
    },
  };
}
