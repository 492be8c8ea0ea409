import { describe, expect, it } from 'vitest';
import type { StepMetrics } from '../../app/engine/types.js';
import type { RunBuffers } from '../controller/live-buffers.js';
import { RunMetrics } from '../metrics/run-metrics.js';
import { TextStream } from '../metrics/text-stream.js';
import { niceSignedAxis, readChartTheme } from './chart-theme.js';
import { PROCESS_MEMORY_CHART } from './process-memory-chart.js';

const KIB = 1024;

/** Steps whose resident memory rises `rise` after the prefill, except one step that falls `fall` below it. */
function run(rise: number, fall: number): RunMetrics {
  const metrics = new RunMetrics({ layerCount: 1, expectedSteps: 8, residualLength: null, kvBytesPerValue: 2 });
  const steps: StepMetrics[] = [];
  for (let step = 0; step < 8; step++) {
    const memory = { tokens: 4 + step, quantizedTokens: 0, fullPrecisionTokens: 4 + step, valueCount: 64, codeBytes: 0, metadataBytes: 0, fullPrecisionBytes: 256, totalBytes: 256, fp16BaselineBytes: 128, fp32BaselineBytes: 256, workingBytes: 0 };
    const rss = 100 * 1024 * KIB + (step === 0 ? 0 : step === 2 ? -fall : (rise * step) / 7);
    steps.push({
      step, tokenId: 5, seqLength: 4 + step, timings: { dequantizeMs: 0, modelMs: 1, quantizeMs: 0, totalMs: 1 }, tokensPerSecond: 0,
      kvBytes: [memory], materializedKvBytes: 256, flushes: [], memory: { rssBytes: rss, externalBytes: 0, arrayBuffersBytes: 0 },
    });
  }
  metrics.append(steps);
  return metrics;
}

type Axis = { name: string; min: number; max: number; interval: number };

function axisOf(metrics: RunMetrics): { axis: Axis; process: number[] } {
  const buffers = { metrics, text: new TextStream(), layerKinds: [], quantizedLayers: [true], modelLabel: 'test' } as unknown as RunBuffers;
  const context = { buffers, theme: readChartTheme(), scale: 'linear' as const };
  const drawer = PROCESS_MEMORY_CHART.create();
  drawer.setup(context);
  const option = drawer.update(context) as { yAxis: Axis; series: { data: Float64Array }[] };
  return { axis: option.yAxis, process: [...option.series[0]!.data].filter((_, i) => i % 2 === 1) };
}

describe('the process memory chart\'s axis', () => {
  it('keeps a fall below the prefill honest, in a unit chosen from the whole range, on round ticks a step apart', () => {
    // the tour's case: 400 KiB above the prefill at the end, one 2,000 KiB fall just after it
    const { axis, process } = axisOf(run(400 * KIB, 2000 * KIB));
    expect(axis.name).toBe('memory (MiB)');
    expect(Math.min(...process)).toBeCloseTo(-2000 / 1024, 6);
    expect(axis.min).toBeLessThanOrEqual(Math.min(...process));
    expect(axis.max).toBeGreaterThanOrEqual(Math.max(...process));
    // 0 is a tick, and both ends are whole steps from it: no label squeezed beside another
    expect(Number.isInteger(Math.round(axis.min / axis.interval * 1e9) / 1e9)).toBe(true);
    expect(Number.isInteger(Math.round(axis.max / axis.interval * 1e9) / 1e9)).toBe(true);
    expect((axis.max - axis.min) / axis.interval).toBeLessThanOrEqual(8);
  });

  it('starts at 0 when the process never gives memory back', () => {
    const { axis, process } = axisOf(run(3 * 1024 * KIB, 0));
    expect(axis.min).toBe(0);
    expect(axis.name).toBe('memory (MiB)');
    expect(axis.max).toBeGreaterThanOrEqual(Math.max(...process));
  });
});

describe('niceSignedAxis', () => {
  it('puts 0 on a tick with round steps on both sides', () => {
    expect(niceSignedAxis(-1.95, 0.39)).toEqual({ min: -2, max: 0.5, interval: 0.5 });
    expect(niceSignedAxis(-2000, 400)).toEqual({ min: -2500, max: 500, interval: 500 });
    expect(niceSignedAxis(0, 37)).toEqual({ min: 0, max: 40, interval: 10 });
    // a value on a tick gets the step beyond, so the line never runs along the frame
    expect(niceSignedAxis(0, 40)).toEqual({ min: 0, max: 50, interval: 10 });
    expect(niceSignedAxis(0, 0)).toEqual({ min: 0, max: 1, interval: 0.2 });
  });
});
