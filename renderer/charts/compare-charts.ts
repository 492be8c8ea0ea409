import { byteUnitFor } from '../format/units.js';
import { LAYER_FIELDS } from '../metrics/run-metrics.js';
import type { RunBuffers } from '../controller/live-buffers.js';
import { errorAxis, errorBars, errorBarTooltip, layerBarTooltip, lineSeries, stepChartBase } from './chart-parts.js';
import type { ChartSpec } from './chart-spec.js';
import { categoryAxis, valueAxis, type ChartTheme } from './chart-theme.js';
import { rampColor } from './heat-scale.js';
import type { ChartOption } from './echarts-core.js';
import { sampleSteps } from './sample-steps.js';

/**
 * Two saved runs overlaid: run A solid, run B dashed, each in its own colour, on the same axes. The
 * records are complete, so these draw once (no streaming).
 */
interface Comparison {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  /** the points drawn, counted on run A */
  points(a: RunBuffers): number;
  build(theme: ChartTheme, a: RunBuffers, b: RunBuffers): ChartOption;
}

function comparisonChart({ points: count, build, ...text }: Comparison): ChartSpec {
  return {
    ...text,
    minIntervalMs: 0,
    create() {
      let points = 0;
      return {
        points: () => points,
        setup(context) {
          if (context.other === undefined) throw new Error('a comparison chart needs two runs');
          points = count(context.buffers);
          return build(context.theme, context.buffers, context.other);
        },
        update: () => null,
      };
    },
  };
}

const stepCount = (run: RunBuffers): number => run.metrics.steps.length;
const layerCount = (run: RunBuffers): number => run.metrics.layerCount;

function lastStep(runs: readonly RunBuffers[]): number {
  return Math.max(1, ...runs.map((run) => run.metrics.expectedSteps - 1));
}

function overlayLine(name: string, color: string, dashed: boolean, data: Float64Array, width = 1.8): Record<string, unknown> {
  return lineSeries(name, color, { data, width, lineStyle: { type: dashed ? 'dashed' : 'solid' } });
}

/** The dynamic cache a run's cache replaces, in its graph's KV dtype. */
const dtypeColumn = (run: RunBuffers): 'fp32BaselineBytes' | 'fp16BaselineBytes' => (run.metrics.kvBytesPerValue === 2 ? 'fp16BaselineBytes' : 'fp32BaselineBytes');
const dtypeName = (run: RunBuffers): string => (run.metrics.kvBytesPerValue === 2 ? 'fp16' : 'fp32');
/** A run's colour faded halfway into the background: its baseline's own colour, still tied to its run. */
const faded = (theme: ChartTheme, color: string): string => rampColor([theme.background, color], 0.5);

export const COMPARE_MEMORY_CHART = comparisonChart({
  id: 'compare-memory',
  title: 'KV memory over steps',
  description: 'Total stored KV-cache bytes of run A (solid) and run B (dashed), each with the dynamic cache it replaces (its graph\'s KV dtype, the same tokens) as a thin line in its faded colour.',
  points: stepCount,
  build(theme, a, b) {
    const maxBytes = Math.max(a.metrics.steps.last(dtypeColumn(a)), b.metrics.steps.last(dtypeColumn(b)), a.metrics.steps.last('totalBytes'), b.metrics.steps.last('totalBytes'));
    const unit = byteUnitFor(maxBytes);
    const [totalA, baseA] = sampleSteps(a.metrics, 'totalBytes', ['totalBytes', dtypeColumn(a)], unit.bytes);
    const [totalB, baseB] = sampleSteps(b.metrics, 'totalBytes', ['totalBytes', dtypeColumn(b)], unit.bytes);
    return {
      ...stepChartBase(theme, lastStep([a, b]), unit.label),
      yAxis: valueAxis(theme, `KV cache (${unit.label})`, { min: 0 }),
      series: [
        overlayLine('run A', theme.runA, false, totalA!),
        overlayLine('run B', theme.runB, true, totalB!),
        overlayLine(`${dtypeName(a)} dynamic cache A (replaced)`, faded(theme, theme.runA), false, baseA!, 1),
        overlayLine(`${dtypeName(b)} dynamic cache B (replaced)`, faded(theme, theme.runB), true, baseB!, 1),
      ],
    };
  },
});

export const COMPARE_SPEED_CHART = comparisonChart({
  id: 'compare-speed',
  title: 'Decode speed',
  description: 'Running average tokens per second of run A (solid) and run B (dashed).',
  points: stepCount,
  build(theme, a, b) {
    const [speedA] = sampleSteps(a.metrics, 'tokensPerSecond', ['tokensPerSecond']);
    const [speedB] = sampleSteps(b.metrics, 'tokensPerSecond', ['tokensPerSecond']);
    return {
      ...stepChartBase(theme, lastStep([a, b]), 'tok/s'),
      yAxis: valueAxis(theme, 'tok/s', { min: 0 }),
      series: [overlayLine('run A', theme.runA, false, speedA!), overlayLine('run B', theme.runB, true, speedB!)],
    };
  },
});

export const COMPARE_REFERENCE_CHART = comparisonChart({
  id: 'compare-reference',
  title: 'KL against the reference',
  description: 'Per-step KL(reference ‖ quantized) in nats for run A (solid) and run B (dashed); a run without the reference lane has no line.',
  points: stepCount,
  build(theme, a, b) {
    const series: Record<string, unknown>[] = [];
    if (a.metrics.reference() !== null) series.push(overlayLine('run A', theme.runA, false, sampleSteps(a.metrics, 'klDivergence', ['klDivergence'])[0]!));
    if (b.metrics.reference() !== null) series.push(overlayLine('run B', theme.runB, true, sampleSteps(b.metrics, 'klDivergence', ['klDivergence'])[0]!));
    return {
      ...stepChartBase(theme, lastStep([a, b]), 'nats'),
      yAxis: valueAxis(theme, 'KL (nats)', { min: 0 }),
      series,
    };
  },
});

function layerCategories(a: RunBuffers, b: RunBuffers): string[] {
  return Array.from({ length: Math.max(a.metrics.layerCount, b.metrics.layerCount) }, (_, i) => String(i));
}

export const COMPARE_LAYERS_CHART = comparisonChart({
  id: 'compare-layers',
  title: 'KV memory per layer at the end',
  description: 'Bytes each layer stores at the last step, run A next to run B.',
  points: layerCount,
  build(theme, a, b) {
    const totals = (run: RunBuffers): (number | string)[] => Array.from({ length: run.metrics.layerCount }, (_, layer) => {
      if (run.metrics.layerHasKv[layer] !== 1) return '-';
      const bytes = run.metrics.layerBytes;
      return bytes[layer * LAYER_FIELDS]! + bytes[layer * LAYER_FIELDS + 1]! + bytes[layer * LAYER_FIELDS + 2]!;
    });
    const rawA = totals(a);
    const rawB = totals(b);
    const unit = byteUnitFor(Math.max(...[...rawA, ...rawB].map((v) => (typeof v === 'number' ? v : 0))));
    const scale = (values: (number | string)[]): (number | string)[] => values.map((v) => (typeof v === 'number' ? v / unit.bytes : v));
    return {
      ...layerBarTooltip(theme, (v) => `${v.toFixed(3)} ${unit.label}`, '–'),
      xAxis: categoryAxis(theme, 'layer', layerCategories(a, b)),
      yAxis: valueAxis(theme, `KV cache (${unit.label})`, { min: 0 }),
      series: [
        { name: 'run A', type: 'bar', data: scale(rawA), itemStyle: { color: theme.runA }, barMaxWidth: 16 },
        { name: 'run B', type: 'bar', data: scale(rawB), itemStyle: { color: theme.runB }, barMaxWidth: 16 },
      ],
    };
  },
});

export const COMPARE_ERROR_CHART = comparisonChart({
  id: 'compare-error',
  title: 'Final quantization error per layer',
  description: 'Relative error of each layer\'s last quantize event, keys and values, run A next to run B.',
  points: layerCount,
  build(theme, a, b) {
    const bar = (name: string, color: string, data: (number | string)[]): Record<string, unknown> =>
      ({ name, type: 'bar', data, barMaxWidth: 10, itemStyle: { color } });
    return {
      ...errorBarTooltip(theme),
      xAxis: categoryAxis(theme, 'layer', layerCategories(a, b)),
      yAxis: errorAxis(theme, 'rel. error'),
      series: [
        bar('K · run A', theme.runA, errorBars(a.metrics.latestKeyError)),
        bar('K · run B', theme.runB, errorBars(b.metrics.latestKeyError)),
        bar('V · run A', faded(theme, theme.runA), errorBars(a.metrics.latestValueError)),
        bar('V · run B', faded(theme, theme.runB), errorBars(b.metrics.latestValueError)),
      ],
    };
  },
});

export const COMPARE_CHARTS: readonly ChartSpec[] = [COMPARE_MEMORY_CHART, COMPARE_LAYERS_CHART, COMPARE_SPEED_CHART, COMPARE_ERROR_CHART, COMPARE_REFERENCE_CHART];
