import { canvasColorNormalizer, formatCssColor, parseCssColor, resolveCssColor, type ColorNormalizer } from './css-color.js';

/**
 * Colours and type for the charts, read from the CSS custom properties of the current colour scheme
 * (styles/app.css), so charts follow prefers-color-scheme like the rest of the window. Each quantity
 * keeps one colour everywhere (codes are always blue, the fp16 baseline always grey).
 */
export interface ChartTheme {
  readonly dark: boolean;
  readonly text: string;
  readonly muted: string;
  readonly grid: string;
  readonly background: string;
  readonly codes: string;
  readonly metadata: string;
  readonly fullPrecision: string;
  readonly baseline: string;
  readonly key: string;
  readonly value: string;
  readonly speed: string;
  readonly dequantize: string;
  readonly model: string;
  readonly quantize: string;
  readonly kl: string;
  readonly agreement: string;
  readonly flush: string;
  readonly runA: string;
  readonly runB: string;
  /** compared runs A, B, C, … (2 to 8): run A and B's colours first, then hues far from both */
  readonly runs: readonly string[];
  readonly materialized: string;
  readonly working: string;
  /** the dynamic cache in the graph's own KV dtype (what a quantized cache replaces) */
  readonly baselineDtype: string;
  readonly baselineFp16: string;
  readonly flushMark: string;
  readonly rss: string;
  readonly external: string;
  readonly arrayBuffers: string;
  readonly speedRolling: string;
  /** steps whose top-1 token differs from the reference */
  readonly differs: string;
  readonly referenceTime: string;
  readonly otherTime: string;
  /**
   * sequential ramp for error heatmaps, low → high: in both schemes the low end fades into the
   * background and the high end stands out, so "more intense = larger error" holds in light and dark
   */
  readonly heat: readonly string[];
  readonly fontFamily: string;
}

const FALLBACK: ChartTheme = {
  dark: false, text: '#1f2430', muted: '#5c6370', grid: '#e3e6eb', background: '#ffffff',
  codes: '#3b6fd8', metadata: '#e8920c', fullPrecision: '#16a085', baseline: '#8a919c',
  key: '#7b4fd6', value: '#d9480f', speed: '#1c7ed6', dequantize: '#9c5fe0', model: '#3b8fd8', quantize: '#f08c00',
  kl: '#d6336c', agreement: '#2b8a3e', flush: '#c2255c', runA: '#1c7ed6', runB: '#e8590c',
  materialized: '#7048e8', working: '#74b816', baselineDtype: '#343a40', baselineFp16: '#6b7380', flushMark: '#e03131',
  rss: '#0c8599', external: '#d6336c', arrayBuffers: '#a0522d', speedRolling: '#fd7e14', differs: '#f59f00',
  referenceTime: '#2b8a3e', otherTime: '#a9b0ba',
  runs: ['#1c7ed6', '#e8590c', '#2f9e44', '#ae3ec9', '#c92a2a', '#0c8599', '#5c940d', '#495057'],
  heat: ['#fff7ec', '#fdd49e', '#fc8d59', '#d7301f', '#7f0000'],
  fontFamily: 'system-ui, sans-serif',
};

/** Runs C to H of a comparison: Tableau-like hues, readable on each scheme's surface. */
const MORE_RUNS_LIGHT = ['#2f9e44', '#ae3ec9', '#c92a2a', '#0c8599', '#5c940d', '#495057'];
const MORE_RUNS_DARK = ['#69db7c', '#e599f7', '#ff8787', '#3bc9db', '#a9e34b', '#ced4da'];

const VARIABLES: Readonly<Record<Exclude<keyof ChartTheme, 'dark' | 'heat' | 'fontFamily' | 'runs'>, string>> = {
  text: '--text', muted: '--text-muted', grid: '--chart-grid', background: '--surface',
  codes: '--c-codes', metadata: '--c-metadata', fullPrecision: '--c-full-precision', baseline: '--c-baseline',
  key: '--c-key', value: '--c-value', speed: '--c-speed', dequantize: '--c-dequantize', model: '--c-model', quantize: '--c-quantize',
  kl: '--c-kl', agreement: '--c-agreement', flush: '--c-flush', runA: '--c-run-a', runB: '--c-run-b',
  materialized: '--c-materialized', working: '--c-working', baselineDtype: '--c-baseline-dtype', baselineFp16: '--c-baseline-fp16',
  flushMark: '--c-flush-mark', rss: '--c-rss', external: '--c-external', arrayBuffers: '--c-array-buffers',
  speedRolling: '--c-speed-rolling', differs: '--c-differs', referenceTime: '--c-reference-time', otherTime: '--c-other-time',
};

export function readChartTheme(): ChartTheme {
  if (typeof document === 'undefined' || typeof getComputedStyle !== 'function') return FALLBACK;
  const style = getComputedStyle(document.documentElement);
  const read = (name: string, fallback: string): string => style.getPropertyValue(name).trim() || fallback;
  const dark = typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches;
  const theme: Record<string, unknown> = { ...FALLBACK, dark };
  const color = themeColorResolver();
  for (const [key, variable] of Object.entries(VARIABLES)) {
    const fallback = FALLBACK[key as keyof typeof VARIABLES];
    theme[key] = color(read(variable, fallback), fallback);
  }
  theme['runs'] = [theme['runA'], theme['runB'], ...(dark ? MORE_RUNS_DARK : MORE_RUNS_LIGHT)];
  theme['heat'] = dark ? ['#1b2238', '#3a3f8f', '#8c3fa3', '#e0566b', '#ffd166'] : FALLBACK.heat;
  // single quotes: ECharts' SVG renderer writes the family into a double-quoted style attribute as it is,
  // and `"Segoe UI"` there made the exported SVG ill-formed XML (the PDF export could not read it back)
  theme['fontFamily'] = read('--font-ui', FALLBACK.fontFamily).replace(/"/g, "'");
  return theme as unknown as ChartTheme;
}

/**
 * Every theme colour goes through here once, so charts only ever see `#rrggbb` or `rgba()` whatever
 * form the stylesheet (or its minifier: `#fff`) used. The browser's canvas normalizes forms the pure
 * parser does not read (hsl(), names, color-mix()); it is made only when one is met.
 */
function themeColorResolver(): (text: string, fallback: string) => string {
  let normalizer: ColorNormalizer | null | undefined;
  return (text, fallback) => {
    const direct = parseCssColor(text);
    if (direct !== null) return formatCssColor(direct);
    normalizer ??= canvasColorNormalizer();
    const resolved = resolveCssColor(text, normalizer);
    return resolved === null ? fallback : formatCssColor(resolved);
  };
}

/** Axis, tooltip and legend styling shared by every chart. */
export function baseOption(theme: ChartTheme): Record<string, unknown> {
  return {
    animation: false,
    backgroundColor: 'transparent',
    textStyle: { color: theme.text, fontFamily: theme.fontFamily, fontSize: 11 },
    legend: { top: 0, left: 'center', textStyle: { color: theme.muted, fontSize: 11 }, itemWidth: 14, itemHeight: 8, icon: 'roundRect' },
    tooltip: {
      trigger: 'axis', confine: true, backgroundColor: theme.background, borderColor: theme.grid,
      textStyle: { color: theme.text, fontSize: 11 }, axisPointer: { type: 'line', lineStyle: { color: theme.muted } },
    },
    grid: { left: 56, right: 18, top: 48, bottom: 34 },
  };
}

export function valueAxis(theme: ChartTheme, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'value', name, nameLocation: 'middle', nameGap: 40,
    nameTextStyle: { color: theme.muted, fontSize: 11 },
    axisLabel: { color: theme.muted, fontSize: 10 },
    axisLine: { lineStyle: { color: theme.grid } },
    splitLine: { lineStyle: { color: theme.grid } },
    ...extra,
  };
}

export function stepAxis(theme: ChartTheme, maxStep: number): Record<string, unknown> {
  return valueAxis(theme, 'step', { min: 0, max: Math.max(1, maxStep), nameGap: 22, splitLine: { show: false } });
}

export function categoryAxis(theme: ChartTheme, name: string, data: readonly string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'category', name, data, nameLocation: 'middle', nameGap: 22,
    nameTextStyle: { color: theme.muted, fontSize: 11 },
    axisLabel: { color: theme.muted, fontSize: 10 },
    axisLine: { lineStyle: { color: theme.grid } },
    axisTick: { show: false },
    ...extra,
  };
}

/**
 * A value axis that reaches both `low` and `high` (low ≤ 0 ≤ high) on one round step (1, 2, 2.5, 5 ×
 * 10^k), so every label sits on a tick a whole step from its neighbours: ECharts given an unround min
 * and max prints both ends beside its own ticks, and two labels (400 beside 0) can touch.
 */
export function niceSignedAxis(low: number, high: number, targetTicks = 5): { min: number; max: number; interval: number } {
  const lo = Math.min(0, Number.isFinite(low) ? low : 0);
  const hi = Math.max(0, Number.isFinite(high) ? high : 0);
  const span = hi - lo;
  if (!(span > 0)) return { min: 0, max: 1, interval: 0.2 };
  const raw = span / targetTicks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const interval = ([1, 2, 2.5, 5, 10].find((step) => step * power >= raw) ?? 10) * power;
  // a value exactly on a step still gets the step beyond, so the line never runs along the frame
  return { min: lo < 0 ? -Math.ceil((-lo * 1.0001) / interval) * interval : 0, max: Math.ceil((hi * 1.0001) / interval) * interval || interval, interval };
}

/** A round axis maximum above `value` (1, 2, 2.5, 5 × 10^k). */
export function niceCeil(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}
