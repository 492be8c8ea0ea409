import { interleave, lttbIndices } from '../metrics/lttb.js';
import type { RunMetrics, StepColumn } from '../metrics/run-metrics.js';

/** Points per series handed to ECharts at most; ECharts' own `sampling: 'lttb'` thins further by pixel. */
export const MAX_SERIES_POINTS = 1000;

let stepScratch = new Float64Array(0);
let pivotScratch = new Float64Array(0);
let columnScratch = new Float64Array(0);
let indexScratch = new Int32Array(MAX_SERIES_POINTS);

/**
 * Down-samples per-step columns for a chart: LTTB picks the rows on `pivot` (the stack's total, so a
 * stack's series stay aligned), and each column comes back as ECharts' flat typed-array line data
 * `[step0, y0, step1, y1, …]`, divided by `divisor` (a byte unit). Fresh arrays each call: ECharts
 * keeps a reference to what it was given.
 */
export function sampleSteps(metrics: RunMetrics, pivot: StepColumn, columns: readonly StepColumn[], divisor = 1, maxPoints = MAX_SERIES_POINTS): Float64Array[] {
  const count = metrics.steps.length;
  if (stepScratch.length < count) {
    const size = Math.max(count, stepScratch.length * 2, 1024);
    stepScratch = new Float64Array(size);
    pivotScratch = new Float64Array(size);
    columnScratch = new Float64Array(size);
  }
  if (indexScratch.length < maxPoints) indexScratch = new Int32Array(maxPoints);
  metrics.steps.copyColumn('step', stepScratch);
  metrics.steps.copyColumn(pivot, pivotScratch);
  const chosen = lttbIndices(stepScratch, pivotScratch, count, maxPoints, indexScratch);
  return columns.map((column) => {
    metrics.steps.copyColumn(column, columnScratch);
    if (divisor !== 1) for (let i = 0; i < count; i++) columnScratch[i] = columnScratch[i]! / divisor;
    return interleave(stepScratch, columnScratch, indexScratch, chosen, new Float64Array(2 * chosen));
  });
}

/** Steps where `column` equals `value` (e.g. top-1 disagreements), at most `limit` evenly spread. */
export function stepsWhere(metrics: RunMetrics, column: StepColumn, value: number, yColumn: StepColumn, limit: number): number[][] {
  const hits: number[][] = [];
  const rows = metrics.steps.length;
  for (let i = 0; i < rows; i++) {
    if (metrics.steps.get(column, i) === value) hits.push([metrics.steps.get('step', i), metrics.steps.get(yColumn, i)]);
  }
  if (hits.length <= limit) return hits;
  const stride = hits.length / limit;
  return Array.from({ length: limit }, (_, k) => hits[Math.floor(k * stride)]!);
}

/** At most `limit` of `values`, evenly spread (flush markers on a 10,000-step timeline). */
export function spread(values: ArrayLike<number>, limit: number): number[] {
  if (values.length <= limit) return Array.from(values);
  const stride = values.length / limit;
  return Array.from({ length: limit }, (_, k) => values[Math.floor(k * stride)]!);
}
