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
 * Saved runs overlaid (2 to 8): run A solid, the others dashed, each in its own colour (theme.runs),
 * on the same axes. The records are complete, so these draw once (no streaming).
 */
interface Comparison {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  /** the points drawn, counted on run A */
  points(a: RunBuffers): number;
  build(theme: ChartTheme, runs: readonly CompareRun[]): ChartOption;
}

/** One compared run: its buffers, its letter (A, B, …) and its colour. */
export interface CompareRun {
  readonly buffers: RunBuffers;
  readonly letter: string;
  readonly color: string;
  readonly dashed: boolean;
}

export function runLetter(index: number): string {
  return String.fromCharCode(65 + index);
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
          const others = context.compared ?? (context.other !== undefined ? [context.other] : []);
          if (others.length === 0) throw new Error('a comparison chart needs two runs or more');
          points = count(context.buffers);
          const runs = [context.buffers, ...others].map((buffers, index) => ({
            buffers, letter: runLetter(index), color: context.theme.runs[index % context.theme.runs.length]!, dashed: index > 0,
          }));
          return build(context.theme, runs);
        },
        update: () => null,
      };
    },
  };
}

const stepCount = (run: RunBuffers): number => run.metrics.steps.length;
const layerCount = (run: RunBuffers): number => run.metrics.layerCount;

function lastStep(runs: readonly CompareRun[]): number {
  return Math.max(1, ...runs.map((run) => run.buffers.metrics.expectedSteps - 1));
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
  description: 'Total stored KV-cache bytes of each run (A solid, the others dashed), each with the dynamic cache it replaces (its graph\'s KV dtype, the same tokens) as a thin line in its faded colour.',
  points: stepCount,
  build(theme, runs) {
    const maxBytes = Math.max(...runs.flatMap(({ buffers }) => [buffers.metrics.steps.last(dtypeColumn(buffers)), buffers.metrics.steps.last('totalBytes')]));
    const unit = byteUnitFor(maxBytes);
    const sampled = runs.map(({ buffers }) => sampleSteps(buffers.metrics, 'totalBytes', ['totalBytes', dtypeColumn(buffers)], unit.bytes));
    return {
      ...stepChartBase(theme, lastStep(runs), unit.label),
      yAxis: valueAxis(theme, `KV cache (${unit.label})`, { min: 0 }),
      series: [
        ...runs.map((run, i) => overlayLine(`run ${run.letter}`, run.color, run.dashed, sampled[i]![0]!)),
        ...runs.map((run, i) => overlayLine(`${dtypeName(run.buffers)} dynamic cache ${run.letter} (replaced)`, faded(theme, run.color), run.dashed, sampled[i]![1]!, 1)),
      ],
    };
  },
});

export const COMPARE_SPEED_CHART = comparisonChart({
  id: 'compare-speed',
  title: 'Decode speed',
  description: 'Running average tokens per second of each run (A solid, the others dashed).',
  points: stepCount,
  build(theme, runs) {
    return {
      ...stepChartBase(theme, lastStep(runs), 'tok/s'),
      yAxis: valueAxis(theme, 'tok/s', { min: 0 }),
      series: runs.map((run) => overlayLine(`run ${run.letter}`, run.color, run.dashed, sampleSteps(run.buffers.metrics, 'tokensPerSecond', ['tokensPerSecond'])[0]!)),
    };
  },
});

export const COMPARE_REFERENCE_CHART = comparisonChart({
  id: 'compare-reference',
  title: 'KL against the reference',
  description: 'Per-step KL(reference ‖ quantized) in nats for each run (A solid, the others dashed); a run without the reference lane has no line.',
  points: stepCount,
  build(theme, runs) {
    return {
      ...stepChartBase(theme, lastStep(runs), 'nats'),
      yAxis: valueAxis(theme, 'KL (nats)', { min: 0 }),
      series: runs.filter((run) => run.buffers.metrics.reference() !== null)
        .map((run) => overlayLine(`run ${run.letter}`, run.color, run.dashed, sampleSteps(run.buffers.metrics, 'klDivergence', ['klDivergence'])[0]!)),
    };
  },
});

function layerCategories(runs: readonly CompareRun[]): string[] {
  return Array.from({ length: Math.max(...runs.map((run) => run.buffers.metrics.layerCount)) }, (_, i) => String(i));
}

export const COMPARE_LAYERS_CHART = comparisonChart({
  id: 'compare-layers',
  title: 'KV memory per layer at the end',
  description: 'Bytes each layer stores at the last step, the runs side by side.',
  points: layerCount,
  build(theme, runs) {
    const totals = (run: RunBuffers): (number | string)[] => Array.from({ length: run.metrics.layerCount }, (_, layer) => {
      if (run.metrics.layerHasKv[layer] !== 1) return '-';
      const bytes = run.metrics.layerBytes;
      return bytes[layer * LAYER_FIELDS]! + bytes[layer * LAYER_FIELDS + 1]! + bytes[layer * LAYER_FIELDS + 2]!;
    });
    const raw = runs.map((run) => totals(run.buffers));
    const unit = byteUnitFor(Math.max(...raw.flat().map((v) => (typeof v === 'number' ? v : 0))));
    const scale = (values: (number | string)[]): (number | string)[] => values.map((v) => (typeof v === 'number' ? v / unit.bytes : v));
    return {
      ...layerBarTooltip(theme, (v) => `${v.toFixed(3)} ${unit.label}`, '–'),
      xAxis: categoryAxis(theme, 'layer', layerCategories(runs)),
      yAxis: valueAxis(theme, `KV cache (${unit.label})`, { min: 0 }),
      series: runs.map((run, i) => ({ name: `run ${run.letter}`, type: 'bar', data: scale(raw[i]!), itemStyle: { color: run.color }, barMaxWidth: 16 })),
    };
  },
});

export const COMPARE_ERROR_CHART = comparisonChart({
  id: 'compare-error',
  title: 'Final quantization error per layer',
  description: 'Relative error of each layer\'s last quantize event, keys in each run\'s colour, values in its faded colour, the runs side by side.',
  points: layerCount,
  build(theme, runs) {
    const bar = (name: string, color: string, data: (number | string)[]): Record<string, unknown> =>
      ({ name, type: 'bar', data, barMaxWidth: 10, itemStyle: { color } });
    return {
      ...errorBarTooltip(theme),
      xAxis: categoryAxis(theme, 'layer', layerCategories(runs)),
      yAxis: errorAxis(theme, 'rel. error'),
      series: [
        ...runs.map((run) => bar(`K · run ${run.letter}`, run.color, errorBars(run.buffers.metrics.latestKeyError))),
        ...runs.map((run) => bar(`V · run ${run.letter}`, faded(theme, run.color), errorBars(run.buffers.metrics.latestValueError))),
      ],
    };
  },
});

export const COMPARE_CHARTS: readonly ChartSpec[] = [COMPARE_MEMORY_CHART, COMPARE_LAYERS_CHART, COMPARE_SPEED_CHART, COMPARE_ERROR_CHART, COMPARE_REFERENCE_CHART];
