import { predictKvPeak } from '../../app/cache/kv-peak.js';
import { byteUnitFor, type ByteUnit } from '../format/units.js';
import { countingDrawer, lineSeries, stepChartBase } from './chart-parts.js';
import type { ChartDrawer, ChartSpec } from './chart-spec.js';
import { niceSignedAxis, valueAxis } from './chart-theme.js';

/**
 * What the process itself holds because of the cache, against what a dynamic cache would make it
 * hold: the run's resident memory above its prefill step (what the step added: the cache, and on the
 * host path every layer's dequantized history), the cache's stored bytes, and the dynamic cache's
 * predicted process memory at the same context (app/cache/kv-peak.ts: its past, ONNX Runtime's present
 * and the present copied out, 3× the full-precision K+V). On the in-graph path (`--dequantize graph`) the
 * first follows the second; on the host path it follows the third.
 */
export const PROCESS_MEMORY_CHART: ChartSpec = {
  id: 'process-memory',
  title: 'Process memory against a dynamic cache',
  description: 'Resident memory above the prefill step (below zero where the process gave memory back), the KV cache\'s stored bytes, and the process memory a dynamic (full-precision) cache would hold at the same context (predicted), over steps.',
  minIntervalMs: 300,
  create(): ChartDrawer {
    let unit: ByteUnit | null = null;
    return countingDrawer({
      setup({ theme, buffers }) {
        return {
          ...stepChartBase(theme, buffers.metrics.expectedSteps - 1, () => unit?.label ?? 'B'),
          yAxis: valueAxis(theme, 'memory', { min: 0 }),
          series: [
            // large: ECharts reads the typed arrays below as flat [step, value, …] pairs (as run-charts.ts's lines)
            lineSeries('process above prefill', theme.quantize, { width: 2, large: true }),
            lineSeries('KV cache stored', theme.codes, { width: 1.5, large: true }),
            lineSeries('dynamic cache (predicted)', theme.baseline, { width: 1.5, lineStyle: { type: 'dashed' }, large: true }),
          ],
        };
      },
      update({ buffers, theme }) {
        const m = buffers.metrics;
        const rows = m.steps.length;
        if (m.stepCount < 2 || rows === 0) return null;
        const fullPerValue = m.kvBytesPerValue / 2;
        const dynamicAt = (fp16Bytes: number): number => predictKvPeak({
          path: 'dynamic', fullPrecisionBytes: fp16Bytes * fullPerValue, quantizedFullPrecisionBytes: 0, quantizedLayers: 0,
          stored: { codeBytes: 0, metadataBytes: 0, fullPrecisionBytes: fp16Bytes * fullPerValue }, residualCapacityBytes: 0, bytesPerValue: m.kvBytesPerValue,
        }).bytes;
        const last = m.steps.length - 1;
        let top = Math.max(dynamicAt(m.projectedFp16Bytes() ?? m.steps.get('fp16BaselineBytes', last)), m.steps.get('rssBytes', last) - m.steps.get('rssBytes', 0));
        const stride = Math.max(1, Math.floor(rows / 1000));
        const base = m.steps.get('rssBytes', 0);
        const points = Math.ceil(rows / stride);
        // the process may give memory back after the prefill (a freed buffer, the GC): a fall is drawn
        // below zero as it happened, never clamped to 0, and the axis reaches down to it
        let lowest = 0;
        const process = new Float64Array(2 * points);
        const stored = new Float64Array(2 * points);
        const dynamic = new Float64Array(2 * points);
        for (let i = 0, k = 0; i < rows; i += stride, k += 2) {
          const step = m.steps.get('step', i);
          process[k] = stored[k] = dynamic[k] = step;
          process[k + 1] = m.steps.get('rssBytes', i) - base;
          lowest = Math.min(lowest, process[k + 1]!);
          stored[k + 1] = m.steps.get('totalBytes', i);
          dynamic[k + 1] = dynamicAt(m.steps.get('fp16BaselineBytes', i));
          top = Math.max(top, process[k + 1]!, stored[k + 1]!);
        }
        // the unit follows the whole range, the fall included (a 2 MiB fall under a 400 KiB rise reads
        // −2 MiB, not −2,000 KiB); it only grows during a run, so labels do not flip back and forth
        const wanted = byteUnitFor(Math.max(top, -lowest));
        if (unit === null || wanted.bytes > unit.bytes) unit = wanted;
        for (let k = 1; k < process.length; k += 2) {
          process[k] = process[k]! / unit.bytes;
          stored[k] = stored[k]! / unit.bytes;
          dynamic[k] = dynamic[k]! / unit.bytes;
        }
        const axis = niceSignedAxis(lowest / unit.bytes, top / unit.bytes);
        return {
          points,
          option: {
            yAxis: valueAxis(theme, `memory (${unit.label})`, { ...axis, axisLabel: { color: theme.muted, fontSize: 10, hideOverlap: true } }),
            series: [{ data: process }, { data: stored }, { data: dynamic }],
          },
        };
      },
    });
  },
};
