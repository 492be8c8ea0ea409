import type { EvalRecord } from '../../../app/lab/eval-record.js';
import type { SweepRow } from '../../../app/lab/sweep-results.js';
import type { ChartTheme } from '../../charts/chart-theme.js';
import type { ChartOption } from '../../charts/echarts-core.js';
import type { LabChartChoice } from '../../store/lab-slice.js';
import { isMeasured, paretoFrontier, pointLabel, X_LABELS, xOf, Y_LABELS, yOf, type HeatmapCell } from './lab-metrics.js';

/** Series colours for points and compared points (the theme's, then a fixed palette). */
const PALETTE = ['#1c7ed6', '#e8590c', '#2b8a3e', '#ae3ec9', '#f08c00', '#0c8599', '#c2255c', '#5f3dc4', '#66a80f', '#495057'];

function axisStyle(theme: ChartTheme): Record<string, unknown> {
  return {
    axisLine: { lineStyle: { color: theme.muted } },
    axisLabel: { color: theme.muted },
    nameTextStyle: { color: theme.muted },
    splitLine: { lineStyle: { color: theme.grid } },
  };
}

/**
 * The Pareto scatter: one dot per measured point (x: cost, y: loss), the frontier drawn through the
 * points no other beats on both. Log axes drop points at 0 (the dynamic cache's KLD), which a log
 * scale cannot place; the tooltip says each point's settings. `data[i][2]` is the point's name, for clicks.
 */
export function paretoOption(rows: readonly SweepRow[], choice: LabChartChoice, theme: ChartTheme): { option: ChartOption; points: number } {
  const measured = rows.filter(isMeasured).filter((row) => (!choice.logX || xOf(row, choice.x) > 0) && (!choice.logY || yOf(row, choice.y) > 0));
  const frontier = paretoFrontier(measured, (r) => xOf(r, choice.x), (r) => yOf(r, choice.y));
  const dot = (row: (typeof measured)[number]): [number, number, string, string] => [xOf(row, choice.x), yOf(row, choice.y), row.name, pointLabel(row)];
  const families = paretoFamilies(measured);
  const emphasis = { scale: 1.6, label: { show: true, position: 'top', formatter: (params: { data: [number, number, string, string] }) => params.data[3], color: theme.text, fontSize: 11, backgroundColor: theme.background, padding: [2, 4], borderRadius: 3 } };
  return {
    points: measured.length,
    option: {
      backgroundColor: 'transparent',
      animation: false,
      textStyle: { fontFamily: theme.fontFamily, color: theme.text },
      // the y name runs along the axis (not above it, where a long name was clipped)
      grid: { left: 84, right: 24, top: 24, bottom: 48 },
      tooltip: {
        trigger: 'item',
        formatter: (params: { data: [number, number, string, string] }) => {
          const [x, y, , label] = params.data;
          return `${escapeHtml(label)}<br/>${X_LABELS[choice.x]}: ${formatNumber(x)}<br/>${Y_LABELS[choice.y]}: ${formatNumber(y)}`;
        },
      },
      xAxis: { type: choice.logX ? 'log' : 'value', name: X_LABELS[choice.x], nameLocation: 'middle', nameGap: 28, scale: true, ...axisStyle(theme) },
      yAxis: { type: choice.logY ? 'log' : 'value', name: Y_LABELS[choice.y], nameLocation: 'middle', nameGap: 62, nameRotate: 90, scale: true, ...axisStyle(theme) },
      // one family (transformers' cache alone): no legend, as before; runtime formats add one, naming each runtime
      ...(families.length > 1 ? { legend: { top: 0, textStyle: { color: theme.text }, data: families.map((f) => f.name) } } : {}),
      series: [
        // hovering a dot names its settings beside it (the tooltip adds its figures)
        ...families.map((family, index) => ({
          id: index === 0 ? 'points' : `points-${family.name}`, name: family.name, type: 'scatter', symbol: family.symbol, symbolSize: 10,
          itemStyle: { color: index === 0 ? theme.codes : PALETTE[index % PALETTE.length] }, data: family.rows.map(dot), emphasis,
        })),
        { id: 'frontier', name: 'Pareto frontier', type: 'line', step: false, symbol: 'none', lineStyle: { color: theme.kl, width: 2, type: 'dashed' }, data: frontier.map(dot), z: 1 },
      ],
    },
  };
}

/** Marks for the families after the first (transformers' circles): one shape per runtime. */
const FAMILY_SYMBOLS = ['diamond', 'triangle', 'rect', 'pin', 'roundRect', 'arrow'];

/**
 * The points by family (issue 27): transformers' cache (its dynamic cache included) first, then each
 * runtime whose write-once format a point ran, in order of first appearance, each with its own mark.
 */
export function paretoFamilies<R extends SweepRow>(rows: readonly R[]): { name: string; symbol: string; rows: R[] }[] {
  const byName = new Map<string, R[]>();
  for (const row of rows) {
    const name = row.settings?.family ?? 'transformers';
    byName.set(name, [...(byName.get(name) ?? []), row]);
  }
  const runtimes = [...byName.keys()].filter((name) => name !== 'transformers');
  const transformers = byName.has('transformers') ? [{ name: 'transformers', symbol: 'circle', rows: byName.get('transformers')! }] : [];
  return [...transformers, ...runtimes.map((name, index) => ({ name, symbol: FAMILY_SYMBOLS[index % FAMILY_SYMBOLS.length]!, rows: byName.get(name)! }))];
}

/** The layer × K/V heatmap: mean KLD of quantizing one layer's keys, values or both (log colour scale). */
export function heatmapOption(cells: readonly HeatmapCell[], theme: ChartTheme): ChartOption {
  const layers = [...new Set(cells.map((c) => c.layer))].sort((a, b) => a - b);
  const parts = ['key', 'value', 'both'] as const;
  const values = cells.map((c) => Math.log10(Math.max(c.kld, 1e-12)));
  const min = Math.min(...values);
  const max = Math.max(...values);
  return {
    backgroundColor: 'transparent',
    animation: false,
    textStyle: { fontFamily: theme.fontFamily, color: theme.text },
    grid: { left: 64, right: 96, top: 16, bottom: 40 },
    tooltip: {
      formatter: (params: { data: [number, number, number, number] }) => `layer ${layers[params.data[0]]}, ${parts[params.data[1]]}: mean KLD ${formatNumber(params.data[3])}`,
    },
    xAxis: { type: 'category', name: 'layer', nameLocation: 'middle', nameGap: 26, data: layers.map(String), ...axisStyle(theme) },
    yAxis: { type: 'category', data: ['K only', 'V only', 'K and V'], ...axisStyle(theme) },
    visualMap: {
      min, max: max === min ? min + 1 : max, calculable: false, orient: 'vertical', right: 8, top: 'middle', dimension: 2,
      inRange: { color: [...theme.heat] }, text: ['high KLD', 'low'], textStyle: { color: theme.muted },
      formatter: (value: number) => formatNumber(10 ** value),
    },
    series: [{
      type: 'heatmap',
      data: cells.map((c) => [layers.indexOf(c.layer), parts.indexOf(c.parts), Math.log10(Math.max(c.kld, 1e-12)), c.kld]),
      // Dark text on a light halo reads on every colour of the ramp, in both schemes.
      label: { show: true, formatter: (params: { data: [number, number, number, number] }) => formatNumber(params.data[3]), color: '#111', textBorderColor: '#fff', textBorderWidth: 2, fontSize: 10 },
    }],
  };
}

/** N points compared: mean KLD per window, one line per point, its settings in the legend. */
export function compareOption(entries: readonly { row: SweepRow; record: EvalRecord | undefined }[], theme: ChartTheme): ChartOption {
  const withRecords = entries.filter((e): e is { row: SweepRow; record: EvalRecord } => e.record !== undefined);
  const windows = Math.max(0, ...withRecords.map((e) => e.record.perWindow.length));
  return {
    backgroundColor: 'transparent',
    animation: false,
    color: PALETTE,
    textStyle: { fontFamily: theme.fontFamily, color: theme.text },
    // every series in the legend, wrapped over as many lines as it takes (no pages to flip)
    legend: { type: 'plain', top: 0, left: 8, right: 8, textStyle: { color: theme.text, fontSize: 11 }, itemGap: 12 },
    grid: { left: 64, right: 24, top: 24 + 20 * legendLines(withRecords.length), bottom: 40 },
    tooltip: { trigger: 'axis' },
    xAxis: { type: 'category', name: 'window', nameLocation: 'middle', nameGap: 26, data: Array.from({ length: windows }, (_, i) => String(i + 1)), ...axisStyle(theme) },
    yAxis: { type: 'log', name: 'mean KLD (nats)', ...axisStyle(theme) },
    series: withRecords.map((e) => ({
      type: 'line', name: `#${e.row.index} ${pointLabel(e.row)}`, symbolSize: 6,
      data: e.record.perWindow.map((w) => Math.max(w.summary.kld.mean, 1e-12)),
    })),
  };
}

/** Lines a wrapped legend takes: about two entries (settings text) fit a line of the panel. */
function legendLines(entries: number): number {
  return Math.max(1, Math.ceil(entries / 2));
}

export function formatNumber(value: number): string {
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return value.toFixed(0);
  if (magnitude >= 1) return value.toFixed(3);
  return value.toPrecision(3);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
