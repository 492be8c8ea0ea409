import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../app/cache/cache-config.js';
import { flushSchedule } from '../../app/cache/flush-schedule.js';
import type { RunSettings, StepMetrics } from '../../app/engine/types.js';
import { sampleSteps } from '../charts/sample-steps.js';
import { fakeModel } from '../test-support/fake-models.js';
import { FakeRunSimulation } from '../test-support/fake-run.js';
import { MAX_HEATMAP_COLUMNS, RunMetrics, sumLayerBytes } from './run-metrics.js';

function settings(patch: Partial<RunSettings> = {}): RunSettings {
  return {
    model: '/fake/models/mistral-7b-v0.3', executionProvider: 'cpu', cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
    prompt: 'Once upon a time there was', maxNewTokens: 10_000, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 1 }, reference: true, ...patch,
  };
}

/** A whole run of the fake engine, batched as the worker batches (up to 256 steps a message). */
function streamRun(run: RunSettings, batchSize: number): { metrics: RunMetrics; simulation: FakeRunSimulation; batches: number; last: StepMetrics } {
  const model = fakeModel({ kind: 'folder', path: run.model })!;
  const simulation = new FakeRunSimulation(model.config, 'float16', run, 1);
  const metrics = new RunMetrics({ layerCount: model.config.geometry.numLayers, expectedSteps: run.maxNewTokens, residualLength: run.quantization.residualLength, kvBytesPerValue: 2 });
  const stepColumn = metrics.steps.columns.step;
  let batch: StepMetrics[] = [];
  let batches = 0;
  let last: StepMetrics | undefined;
  while (!simulation.done) {
    last = simulation.next().metrics;
    batch.push(last);
    if (batch.length === batchSize) {
      metrics.append(batch);
      batches++;
      batch = [];
    }
  }
  if (batch.length > 0) {
    metrics.append(batch);
    batches++;
  }
  // the columns are the arrays allocated up front: streaming never grows them
  expect(metrics.steps.columns.step).toBe(stepColumn);
  return { metrics, simulation, batches, last: last! };
}

describe('RunMetrics with 10,000 steps × 32 layers', () => {
  const run = settings();
  const { metrics, simulation, batches, last } = streamRun(run, 25);

  it('sizes its ring for the whole run and keeps every step', () => {
    expect({ capacity: metrics.steps.capacity, held: metrics.steps.length, dropped: metrics.steps.dropped, version: metrics.version })
      .toEqual({ capacity: 10_000, held: 10_000, dropped: 0, version: batches });
  });

  it('sums each step over the layers, as the run record does', () => {
    expect(metrics.steps.last('totalBytes')).toBe(sumLayerBytes(last.kvBytes));
    expect(metrics.steps.last('seqLength')).toBe(last.seqLength);
  });

  it('counts the flushes the engine reports, per layer', () => {
    const result = simulation.result('max-new-tokens', { folder: '/f', onnxFile: 'onnx/model.onnx' }, []);
    const prompt = simulation.promptTokenIds.length;
    const expected = flushSchedule(prompt, 128, run.maxNewTokens - 1, 1).flushSteps.length;
    expect([...metrics.flushCounts]).toEqual(result.flushCounts);
    expect(metrics.flushesPerLayer()).toBe(expected);
    expect(metrics.totalFlushes()).toBe(32 * expected);
    expect([...metrics.flushSteps()]).toEqual(flushSchedule(prompt, 128, run.maxNewTokens - 1, 1).flushSteps);
  });

  it('bins the layer × flush heatmap into a bounded grid', () => {
    expect(metrics.heatmapEvents).toBe(metrics.flushesPerLayer()! + 1);
    expect(metrics.heatmapColumns).toBe(Math.min(MAX_HEATMAP_COLUMNS, metrics.heatmapEvents));
    expect(metrics.heatmapKey).toHaveLength(32 * metrics.heatmapColumns);
    expect(metrics.heatmapKey.every((v) => v > 0)).toBe(true);
  });

  it('down-samples every chart series to at most 1,000 points, stacked series on the same steps', () => {
    const [codes, metadata, fullPrecision] = sampleSteps(metrics, 'totalBytes', ['codeBytes', 'metadataBytes', 'fullPrecisionBytes']);
    expect(codes!.length / 2).toBe(1_000);
    const stepsOf = (data: Float64Array): number[] => [...data].filter((_, i) => i % 2 === 0);
    expect(stepsOf(metadata!)).toEqual(stepsOf(codes!));
    expect(stepsOf(fullPrecision!)).toEqual(stepsOf(codes!));
    expect(stepsOf(codes!)[0]).toBe(0);
    expect(stepsOf(codes!).at(-1)).toBe(9_999);
  });

  it('fixes the memory axis from the prefill: fp16 baseline at the last step', () => {
    expect(metrics.projectedFp16Bytes()).toBe(metrics.steps.last('fp16BaselineBytes'));
  });

  it('keeps the reference lane summary', () => {
    const reference = metrics.reference()!;
    const result = simulation.result('max-new-tokens', { folder: '/f', onnxFile: 'onnx/model.onnx' }, []);
    expect(reference.steps).toBe(10_000);
    expect(reference.meanKl).toBeCloseTo(result.reference!.meanKl, 12);
    expect(reference.top1Agreement).toBeCloseTo(result.reference!.top1Agreement, 12);
    expect(reference.firstDisagreement).toBe(result.reference!.firstDivergenceStep);
  });
});

describe('RunMetrics ring', () => {
  it('keeps the latest steps when a run outgrows its capacity, with exact totals', () => {
    const run = settings({ maxNewTokens: 300, model: '/fake/models/stories260k' });
    const model = fakeModel({ kind: 'folder', path: run.model })!;
    const simulation = new FakeRunSimulation(model.config, 'float32', { ...run, quantization: { ...run.quantization, groupSize: 32, residualLength: 16 } }, 1);
    const metrics = new RunMetrics({ layerCount: 5, expectedSteps: 300, residualLength: 16, kvBytesPerValue: 4, capacity: 64 });
    while (!simulation.done) metrics.append([simulation.next().metrics]);
    expect({ held: metrics.steps.length, dropped: metrics.steps.dropped, first: metrics.steps.get('step', 0), last: metrics.steps.last('step') })
      .toEqual({ held: 64, dropped: 236, first: 236, last: 299 });
    expect(metrics.flushesPerLayer()).toBe(simulation.result('max-new-tokens', { folder: '', onnxFile: '' }, []).flushCounts[0]);
  });

  it('leaves layers without a KV cache out of the sums', () => {
    const metrics = new RunMetrics({ layerCount: 2, expectedSteps: 1, residualLength: null, kvBytesPerValue: 4 });
    const memory = { tokens: 4, quantizedTokens: 0, fullPrecisionTokens: 4, valueCount: 64, codeBytes: 0, metadataBytes: 0, fullPrecisionBytes: 256, totalBytes: 256, fp16BaselineBytes: 128, fp32BaselineBytes: 256, workingBytes: 0 };
    metrics.append([{
      step: 0, tokenId: 5, seqLength: 4, timings: { dequantizeMs: 0, modelMs: 1, quantizeMs: 0, totalMs: 1 }, tokensPerSecond: 0,
      kvBytes: [memory, null], materializedKvBytes: 256, flushes: [], memory: { rssBytes: 0, externalBytes: 0, arrayBuffersBytes: 0 },
    }]);
    expect([metrics.steps.last('totalBytes'), [...metrics.layerHasKv], metrics.flushesPerLayer(), metrics.reference()]).toEqual([256, [1, 0], null, null]);
    expect(Number.isNaN(metrics.steps.last('klDivergence'))).toBe(true);
  });
});
