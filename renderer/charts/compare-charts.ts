import { byteUnitFor, formatError, type ByteUnit } from '../format/units.js';
import type { RunBuffers } from '../controller/live-buffers.js';
import type { ChartContext, ChartDrawer, ChartSpec } from './chart-spec.js';
import { baseOption, categoryAxis, stepAxis, valueAxis } from './chart-theme.js';
import type { ChartOption } from './echarts-core.js';
import { sampleSteps } from './sample-steps.js';
import { stepTooltip } from './tooltip.js';

/**
 * Two saved runs overlaid: run A solid, run B dashed, each in its own colour, on the same axes. The
 * records are complete, so these draw once (no streaming).
 */
function pair(context: ChartContext): readonly [RunBuffers, RunBuffers] {
  if (context.other === undefined) throw new Error('a comparison chart needs two runs');
  return [context.buffers, context.other];
}

function lastStep(runs: readonly RunBuffers[]): number {
  return Math.max(1, ...runs.map((run) => run.metrics.expectedSteps - 1));
}

function staticDrawer(build: (context: ChartContext) => ChartOption, count: (context: ChartContext) => number): ChartDrawer {
  let points = 0;
  return {
    points: () => points,
    setup(context) {
      points = count(context);
      return build(context);
    },
    update: () => null,
  };
}

function overlayLine(name: string, color: string, dashed: boolean, data: Float64Array, width = 1.8): Record<string, unknown> {
  return { name, type: 'line', showSymbol: false, sampling: 'lttb', data, lineStyle: { width, color, type: dashed ? 'dashed' : 'solid' }, itemStyle: { color }, emphasis: { disabled: true } };
}

export const COMPARE_MEMORY_CHART: ChartSpec = {
  id: 'compare-memory',
  title: 'KV memory over steps',
  description: 'Total stored KV-cache bytes of run A (solid) and run B (dashed), with each run\'s fp16 baseline in grey.',
  minIntervalMs: 0,
  create() {
    let unit: ByteUnit = byteUnitFor(1);
    return staticDrawer((context) => {
      const { theme } = context;
      const [a, b] = pair(context);
      const maxBytes = Math.max(a.metrics.steps.last('fp16BaselineBytes'), b.metrics.steps.last('fp16BaselineBytes'), a.metrics.steps.last('totalBytes'), b.metrics.steps.last('totalBytes'));
      unit = byteUnitFor(maxBytes);
      const [totalA, baseA] = sampleSteps(a.metrics, 'totalBytes', ['totalBytes', 'fp16BaselineBytes'], unit.bytes);
      const [totalB, baseB] = sampleSteps(b.metrics, 'totalBytes', ['totalBytes', 'fp16BaselineBytes'], unit.bytes);
      return {
        ...baseOption(theme),
        tooltip: { ...(baseOption(theme)['tooltip'] as object), formatter: stepTooltip(() => unit.label) },
        xAxis: stepAxis(theme, lastStep([a, b])),
        yAxis: valueAxis(theme, `KV cache (${unit.label})`, { min: 0 }),
        series: [
          overlayLine('run A', theme.runA, false, totalA!),
          overlayLine('run B', theme.runB, true, totalB!),
          overlayLine('fp16 baseline A', theme.baseline, false, baseA!, 1),
          overlayLine('fp16 baseline B', theme.baseline, true, baseB!, 1),
        ],
      };
    }, (context) => pair(context)[0].metrics.steps.length);
  },
};

export const COMPARE_SPEED_CHART: ChartSpec = {
  id: 'compare-speed',
  title: 'Decode speed',
  description: 'Running average tokens per second of run A (solid) and run B (dashed).',
  minIntervalMs: 0,
  create() {
    return staticDrawer((context) => {
      const { theme } = context;
      const [a, b] = pair(context);
      const [speedA] = sampleSteps(a.metrics, 'tokensPerSecond', ['tokensPerSecond']);
      const [speedB] = sampleSteps(b.metrics, 'tokensPerSecond', ['tokensPerSecond']);
      return {
        ...baseOption(theme),
        tooltip: { ...(baseOption(theme)['tooltip'] as object), formatter: stepTooltip(() => 'tok/s') },
        xAxis: stepAxis(theme, lastStep([a, b])),
        yAxis: valueAxis(theme, 'tok/s', { min: 0 }),
        series: [overlayLine('run A', theme.runA, false, speedA!), overlayLine('run B', theme.runB, true, speedB!)],
      };
    }, (context) => pair(context)[0].metrics.steps.length);
  },
};

export const COMPARE_REFERENCE_CHART: ChartSpec = {
  id: 'compare-reference',
  title: 'KL against the reference',
  description: 'Per-step KL(reference ‖ quantized) in nats for run A (solid) and run B (dashed); a run without the reference lane has no line.',
  minIntervalMs: 0,
  create() {
    return staticDrawer((context) => {
      const { theme } = context;
      const [a, b] = pair(context);
      const series: Record<string, unknown>[] = [];
      if (a.metrics.reference() !== null) series.push(overlayLine('run A', theme.runA, false, sampleSteps(a.metrics, 'klDivergence', ['klDivergence'])[0]!));
      if (b.metrics.reference() !== null) series.push(overlayLine('run B', theme.runB, true, sampleSteps(b.metrics, 'klDivergence', ['klDivergence'])[0]!));
      return {
        ...baseOption(theme),
        tooltip: { ...(baseOption(theme)['tooltip'] as object), formatter: stepTooltip(() => 'nats') },
        xAxis: stepAxis(theme, lastStep([a, b])),
        yAxis: valueAxis(theme, 'KL (nats)', { min: 0 }),
        series,
      };
    }, (context) => pair(context)[0].metrics.steps.length);
  },
};

function layerCategories(a: RunBuffers, b: RunBuffers): string[] {
  return Array.from({ length: Math.max(a.metrics.layerCount, b.metrics.layerCount) }, (_, i) => String(i));
}

export const COMPARE_LAYERS_CHART: ChartSpec = {
  id: 'compare-layers',
  title: 'KV memory per layer at the end',
  description: 'Bytes each layer stores at the last step, run A next to run B.',
  minIntervalMs: 0,
  create() {
    let unit: ByteUnit = byteUnitFor(1);
    return staticDrawer((context) => {
      const { theme } = context;
      const [a, b] = pair(context);
      const totals = (run: RunBuffers): (number | string)[] => Array.from({ length: run.metrics.layerCount }, (_, layer) => {
        if (run.metrics.layerHasKv[layer] !== 1) return '-';
        const bytes = run.metrics.layerBytes;
        return bytes[layer * 4]! + bytes[layer * 4 + 1]! + bytes[layer * 4 + 2]!;
      });
      const rawA = totals(a);
      const rawB = totals(b);
      unit = byteUnitFor(Math.max(...[...rawA, ...rawB].map((v) => (typeof v === 'number' ? v : 0))));
      const scale = (values: (number | string)[]): (number | string)[] => values.map((v) => (typeof v === 'number' ? v / unit.bytes : v));
      return {
        ...baseOption(theme),
        tooltip: { ...(baseOption(theme)['tooltip'] as object), axisPointer: { type: 'shadow' }, valueFormatter: (v: unknown) => (typeof v === 'number' ? `${v.toFixed(3)} ${unit.label}` : '–') },
        xAxis: categoryAxis(theme, 'layer', layerCategories(a, b)),
        yAxis: valueAxis(theme, `KV cache (${unit.label})`, { min: 0 }),
        series: [
          { name: 'run A', type: 'bar', data: scale(rawA), itemStyle: { color: theme.runA }, barMaxWidth: 16 },
          { name: 'run B', type: 'bar', data: scale(rawB), itemStyle: { color: theme.runB }, barMaxWidth: 16 },
        ],
      };
    }, (context) => pair(context)[0].metrics.layerCount);
  },
};

export const COMPARE_ERROR_CHART: ChartSpec = {
  id: 'compare-error',
  title: 'Final quantization error per layer',
  description: 'Relative error of each layer\'s last quantize event, keys and values, run A next to run B.',
  minIntervalMs: 0,
  create() {
    return staticDrawer((context) => {
      const { theme } = context;
      const [a, b] = pair(context);
      const values = (errors: Float64Array): (number | string)[] => Array.from(errors, (v) => (Number.isNaN(v) ? '-' : v));
      const bar = (name: string, color: string, data: (number | string)[], decal: boolean): Record<string, unknown> =>
        ({ name, type: 'bar', data, barMaxWidth: 10, itemStyle: { color, opacity: decal ? 0.55 : 1 } });
      return {
        ...baseOption(theme),
        tooltip: { ...(baseOption(theme)['tooltip'] as object), axisPointer: { type: 'shadow' }, valueFormatter: (v: unknown) => (typeof v === 'number' ? formatError(v) : 'not quantized') },
        xAxis: categoryAxis(theme, 'layer', layerCategories(a, b)),
        yAxis: valueAxis(theme, 'rel. error', { min: 0, axisLabel: { color: theme.muted, fontSize: 10, formatter: (v: number) => formatError(v) } }),
        series: [
          bar('K · run A', theme.runA, values(a.metrics.latestKeyError), false),
          bar('K · run B', theme.runB, values(b.metrics.latestKeyError), false),
          bar('V · run A', theme.runA, values(a.metrics.latestValueError), true),
          bar('V · run B', theme.runB, values(b.metrics.latestValueError), true),
        ],
      };
    }, (context) => pair(context)[0].metrics.layerCount);
  },
};

export const COMPARE_CHARTS: readonly ChartSpec[] = [COMPARE_MEMORY_CHART, COMPARE_LAYERS_CHART, COMPARE_SPEED_CHART, COMPARE_ERROR_CHART, COMPARE_REFERENCE_CHART];
