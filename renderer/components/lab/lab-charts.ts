import type { EvalRecord } from '../../../app/lab/eval-record.js';
import type { SweepRow } from '../../../app/lab/sweep-results.js';
import type { ChartTheme } from '../../charts/chart-theme.js';
import type { ChartOption } from '../../charts/echarts-core.js';
import type { LabChartChoice } from '../../store/lab-slice.js';
import { isMeasured, optionsLabel, paretoFrontier, pointLabel, X_LABELS, xOf, Y_LABELS, yOf, type HeatmapCell } from './lab-metrics.js';

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
  const varying = varyingOptions(rows);
  const dot = (row: (typeof measured)[number]): ParetoDot => [xOf(row, choice.x), yOf(row, choice.y), row.name, pointLabel(row), shortPointLabel(row, varying)];
  const families = paretoFamilies(measured);
  // label sides decided over every dot, whatever its family: two families' points can coincide
  const placed = new Map(labelSides(measured.map(dot)).map((item) => [item.value[2], item]));
  const label = {
    position: 'top', color: theme.text, fontSize: 11, backgroundColor: theme.background, padding: [2, 4], borderRadius: 3,
  } as const;
  return {
    points: measured.length,
    option: {
      backgroundColor: 'transparent',
      animation: false,
      textStyle: { fontFamily: theme.fontFamily, color: theme.text },
      // the y name runs along the axis (not above it, where a long name was clipped); labels shown
      // always get room above the highest dot, and the families' legend its own line
      grid: { left: 84, right: choice.labels ? 48 : 24, top: (choice.labels ? 40 : 24) + (families.length > 1 ? 24 : 0), bottom: 48 },
      tooltip: {
        trigger: 'item',
        formatter: (params: { value: ParetoDot }) => {
          const [x, y, , long] = params.value;
          return `${escapeHtml(long)}<br/>${X_LABELS[choice.x]}: ${formatNumber(x)}<br/>${Y_LABELS[choice.y]}: ${formatNumber(y)}`;
        },
      },
      // a margin inside each end, so a label centred on the first or last dot is not cut at the edge
      xAxis: {
        type: choice.logX ? 'log' : 'value', name: X_LABELS[choice.x], nameLocation: 'middle', nameGap: 28, scale: true,
        ...(choice.logX ? {} : { boundaryGap: ['12%', '12%'] }), ...axisStyle(theme),
      },
      yAxis: {
        type: choice.logY ? 'log' : 'value', name: Y_LABELS[choice.y], nameLocation: 'middle', nameGap: 62, nameRotate: 90, scale: true,
        ...axisStyle(theme),
      },
      // one family (transformers' cache alone): no legend, as before; runtime formats add one, naming each runtime
      ...(families.length > 1 ? { legend: { top: 0, textStyle: { color: theme.text }, data: families.map((f) => f.name) } } : {}),
      series: [
        ...families.map((family, index) => ({
          id: index === 0 ? 'points' : `points-${family.name}`, name: family.name, type: 'scatter', symbol: family.symbol, symbolSize: 10,
          itemStyle: { color: index === 0 ? theme.codes : PALETTE[index % PALETTE.length] }, data: family.rows.map((row) => placed.get(row.name)!),
          // always on (the toggle): what differs between points, below the dot where a neighbour's is
          // above it, kept apart where they still collide; hovering a dot names its whole settings
          // beside it (the tooltip adds its figures)
          label: { ...label, show: choice.labels, formatter: (params: { value: ParetoDot }) => params.value[4] },
          labelLayout: { moveOverlap: 'shiftY' },
          emphasis: { scale: 1.6, label: { ...label, show: true, formatter: (params: { value: ParetoDot }) => params.value[3] } },
        })),
        { id: 'frontier', name: 'Pareto frontier', type: 'line', step: false, symbol: 'none', lineStyle: { color: theme.kl, width: 2, type: 'dashed' }, data: frontier.map(dot), z: 1 },
      ],
    },
  };
}

/**
 * The dots as ECharts data items, each label above its dot, or below it where the dot's nearest
 * neighbour (within a twentieth of both axes' spans) already has its label above: two points of nearly
 * the same cost and loss (quanto and HQQ at 4 bits) are then both named.
 */
function labelSides(dots: readonly ParetoDot[]): { value: ParetoDot; label?: { position: 'bottom' } }[] {
  const span = (axis: 0 | 1): number => {
    const values = dots.map((d) => d[axis]);
    return Math.max(...values) - Math.min(...values) || 1;
  };
  const [spanX, spanY] = [span(0), span(1)];
  const below = new Set<number>();
  dots.forEach((dot, i) => {
    const crowded = dots.some((other, j) => j < i && !below.has(j) && Math.abs(other[0] - dot[0]) < spanX / 20 && Math.abs(other[1] - dot[1]) < spanY / 20);
    if (crowded) below.add(i);
  });
  return dots.map((value, i) => (below.has(i) ? { value, label: { position: 'bottom' } } : { value }));
}

/** One Pareto dot: x, y, the point's name (for clicks), its whole settings (hover), what varies in the sweep (always-on label). */
type ParetoDot = [number, number, string, string, string];

/** What sets a point apart in its sweep (the options whose values differ between points), shorter than its whole settings. */
function shortPointLabel(row: SweepRow, varying: ReadonlySet<string>): string {
  if (row.settings?.cacheMode === 'dynamic') return 'dynamic';
  const own = Object.fromEntries(Object.entries(row.options).filter(([key]) => varying.has(key)));
  return optionsLabel(own) || pointLabel(row);
}

/** The option names whose values are not the same at every point of the sweep. */
function varyingOptions(rows: readonly SweepRow[]): ReadonlySet<string> {
  const values = new Map<string, Set<string>>();
  for (const row of rows) {
    for (const [key, value] of Object.entries(row.options)) {
      const seen = values.get(key) ?? new Set<string>();
      seen.add(String(value));
      values.set(key, seen);
    }
  }
  return new Set([...values].filter(([, seen]) => seen.size > 1).map(([key]) => key));
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
