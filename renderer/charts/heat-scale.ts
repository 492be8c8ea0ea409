import { formatError } from '../format/units.js';
import { niceCeil } from './chart-theme.js';
import { formatCssColor, mixColors, parseCssColor, type Rgba } from './css-color.js';

export type ChartScale = 'linear' | 'log';

/** One band of a numbered colour scale: values in [min, max) get `color`. */
export interface HeatBand {
  readonly min: number;
  readonly max: number;
  readonly label: string;
  readonly color: string;
}

/** Bands of a linear scale: few enough to read, enough to tell 7 % from 8 %. */
const LINEAR_BANDS = 8;

/**
 * A numbered colour scale for relative errors over [low, high] (the errors of every run shown, so two
 * runs compared side by side colour the same number the same way):
 * - linear: 0 to a round maximum in equal bands, so colour differences are proportional to error
 *   differences and a 15 % spread stays a 15 % spread, not full contrast;
 * - log: whole decades (1-2-5 steps inside), for errors that span orders of magnitude (1-bit vs 8-bit).
 * Each band is labelled with its numbers; the ramp runs from the background (small) to intense (large).
 */
export function heatBands(low: number, high: number, scale: ChartScale, ramp: readonly string[]): HeatBand[] {
  if (!(high > 0)) return [{ min: 0, max: 1, label: 'no error yet', color: ramp[0] ?? '#ccc' }];
  const edges = scale === 'linear' ? linearEdges(high) : logEdges(low > 0 ? low : high / 1000, high);
  const bands: HeatBand[] = [];
  for (let i = 0; i + 1 < edges.length; i++) {
    const min = edges[i]!;
    const max = edges[i + 1]!;
    bands.push({ min, max, label: `${formatError(min)} – ${formatError(max)}`, color: rampColor(ramp, edges.length <= 2 ? 1 : i / (edges.length - 2)) });
  }
  return bands;
}

function linearEdges(high: number): number[] {
  const top = niceCeil(high);
  return Array.from({ length: LINEAR_BANDS + 1 }, (_, i) => (top * i) / LINEAR_BANDS);
}

function logEdges(low: number, high: number): number[] {
  const first = Math.floor(Math.log10(low));
  const last = Math.ceil(Math.log10(high));
  const steps = last - first <= 2 ? [1, 2, 5] : [1];
  const edges: number[] = [];
  for (let decade = first; decade < last; decade++) for (const step of steps) edges.push(step * 10 ** decade);
  edges.push(10 ** last);
  // keep only the bands around the data, and at least two
  const from = Math.max(0, edges.findIndex((edge) => edge > low) - 1);
  const to = edges.findIndex((edge) => edge >= high);
  const trimmed = edges.slice(from, (to === -1 ? edges.length - 1 : to) + 1);
  return trimmed.length >= 2 ? trimmed : [edges[0]!, edges[edges.length - 1]!];
}

/**
 * The ramp's colour at t ∈ [0, 1], interpolated between its stops. Stops are theme colours, which
 * readChartTheme has normalized; any hex or rgb() form is read (css-color.ts).
 */
export function rampColor(ramp: readonly string[], t: number): string {
  if (ramp.length === 0) return '#888888';
  if (ramp.length === 1) return ramp[0]!;
  const x = Math.min(1, Math.max(0, t)) * (ramp.length - 1);
  const i = Math.min(ramp.length - 2, Math.floor(x));
  return formatCssColor(mixColors(stop(ramp[i]!), stop(ramp[i + 1]!), x - i));
}

function stop(color: string): Rgba {
  const parsed = parseCssColor(color);
  // a programming error: theme colours are normalized when read (chart-theme.ts themeColorResolver)
  if (parsed === null) throw new Error(`the colour ramp stop "${color}" is not a hex or rgb() colour; read it through readChartTheme`);
  return parsed;
}

/** The smallest and largest finite positive values of some grids (NaN = no event). */
export function valueRange(grids: readonly ArrayLike<number>[]): { low: number; high: number } {
  let low = Infinity;
  let high = 0;
  for (const grid of grids) {
    for (let i = 0; i < grid.length; i++) {
      const v = grid[i]!;
      if (!(v > 0) || !Number.isFinite(v)) continue;
      if (v < low) low = v;
      if (v > high) high = v;
    }
  }
  return { low: Number.isFinite(low) ? low : 0, high };
}
