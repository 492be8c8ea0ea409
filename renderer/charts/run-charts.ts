import { byteUnitFor, formatError, type ByteUnit } from '../format/units.js';
import { layerLabels } from '../format/layer-kinds.js';
import { countingDrawer, errorAxis, errorBars, errorBarTooltip, layerBarTooltip, lineSeries, stepChartBase, type LineExtra } from './chart-parts.js';
import type { ChartContext, ChartDrawer, ChartSpec } from './chart-spec.js';
import { baseOption, categoryAxis, niceCeil, stepAxis, valueAxis, type ChartTheme } from './chart-theme.js';
import type { ChartOption } from './echarts-core.js';
import { sampleSteps, spread, stepsWhere } from './sample-steps.js';

/** Flush markers drawn on the timeline at most (a 2-token residual flushes every other step). */
const MAX_FLUSH_MARKERS = 80;

/** Unlike the comparison charts, which draw once, these lines are redrawn while streaming: large mode on. */
function line(name: string, color: string, extra: LineExtra = {}): Record<string, unknown> {
  return lineSeries(name, color, { large: true, ...extra });
}

function area(name: string, color: string, stack: string): Record<string, unknown> {
  return line(name, color, { stack, width: 1, areaStyle: { color, opacity: 0.55 } });
}

/**
 * The memory axis is fixed from the first step on, at the fp16 baseline of the run's last step (what
 * an uncompressed cache would hold). Should the stored bytes outgrow it (a float32 residual, a
 * dynamic float32 cache), ECharts' data extent takes over instead of clipping.
 */
function memoryAxis(context: ChartContext, perLayer: boolean): { unit: ByteUnit; max: number | ((extent: { max: number }) => number) } | null {
  const metrics = context.buffers.metrics;
  const projected = metrics.projectedFp16Bytes();
  if (projected === null) return null;
  let kvLayers = 0;
  for (const has of metrics.layerHasKv) kvLayers += has;
  const bound = perLayer ? projected / Math.max(1, kvLayers) : projected;
  const unit = byteUnitFor(bound);
  const fixed = niceCeil((bound * 1.05) / unit.bytes);
  return { unit, max: (extent) => (extent.max > fixed ? niceCeil(extent.max) : fixed) };
}

export const KV_MEMORY_CHART: ChartSpec = {
  id: 'kv-memory',
  title: 'KV memory over steps',
  description: 'Stored KV-cache bytes at each step, stacked by component (packed codes, scale/zero metadata, full-precision residual), against the fp16 baseline; dotted lines mark residual flushes.',
  minIntervalMs: 200,
  create(): ChartDrawer {
    let unit: ByteUnit | null = null;
    const yAxis = (theme: ChartTheme, axis: ReturnType<typeof memoryAxis>): Record<string, unknown> =>
      valueAxis(theme, axis === null ? 'KV cache' : `KV cache (${axis.unit.label})`, { min: 0, ...(axis !== null ? { max: axis.max } : {}) });
    return countingDrawer({
      setup(context) {
        const { theme } = context;
        const axis = memoryAxis(context, false);
        unit = axis?.unit ?? null;
        return {
          ...stepChartBase(theme, context.buffers.metrics.expectedSteps - 1, () => unit?.label ?? 'B'),
          yAxis: yAxis(theme, axis),
          series: [
            area('codes', theme.codes, 'kv'),
            area('scale/zero', theme.metadata, 'kv'),
            area('full precision', theme.fullPrecision, 'kv'),
            line('fp16 baseline', theme.baseline, {
              lineStyle: { type: 'dashed' },
              markLine: { silent: true, symbol: 'none', label: { show: false }, lineStyle: { color: theme.flush, type: 'dotted', width: 1, opacity: 0.7 }, data: [] },
            }),
          ],
        };
      },
      update(context) {
        const metrics = context.buffers.metrics;
        const option: ChartOption & { yAxis?: unknown } = {};
        if (unit === null) {
          const axis = memoryAxis(context, false);
          if (axis === null) return null;
          unit = axis.unit;
          option.yAxis = yAxis(context.theme, axis);
        }
        const [codes, metadata, fullPrecision, baseline] = sampleSteps(metrics, 'totalBytes', ['codeBytes', 'metadataBytes', 'fullPrecisionBytes', 'fp16BaselineBytes'], unit.bytes);
        const flushes = spread(metrics.flushSteps(), MAX_FLUSH_MARKERS).map((step) => ({ xAxis: step }));
        const series = [{ data: codes }, { data: metadata }, { data: fullPrecision }, { data: baseline, markLine: { data: flushes } }];
        return { points: codes!.length / 2, option: { ...option, series } };
      },
    });
  },
};

export const KV_LAYERS_CHART: ChartSpec = {
  id: 'kv-layers',
  title: 'KV memory per layer',
  description: 'Bytes each decoder layer stores at the latest step, by component, with its fp16 baseline; layers without a KV cache stay empty.',
  minIntervalMs: 400,
  create(): ChartDrawer {
    let unit: ByteUnit | null = null;
    return countingDrawer({
      setup({ theme, buffers }) {
        const labels = layerLabels(buffers.metrics.layerCount, buffers.layerKinds);
        const bar = (name: string, color: string): Record<string, unknown> => ({ name, type: 'bar', stack: 'kv', data: [], itemStyle: { color }, barMaxWidth: 28, emphasis: { disabled: true } });
        return {
          ...layerBarTooltip(theme, (v) => `${v.toFixed(3)} ${unit?.label ?? 'B'}`, '–'),
          xAxis: categoryAxis(theme, 'layer', labels),
          yAxis: valueAxis(theme, 'KV cache', { min: 0 }),
          series: [
            bar('codes', theme.codes), bar('scale/zero', theme.metadata), bar('full precision', theme.fullPrecision),
            { name: 'fp16 baseline', type: 'line', data: [], symbol: 'rect', symbolSize: [14, 2], lineStyle: { opacity: 0 }, itemStyle: { color: theme.baseline }, emphasis: { disabled: true } },
          ],
        };
      },
      update(context) {
        const metrics = context.buffers.metrics;
        if (metrics.stepCount === 0) return null;
        const option: Record<string, unknown> = {};
        if (unit === null) {
          const axis = memoryAxis(context, true);
          if (axis === null) return null;
          unit = axis.unit;
          option['yAxis'] = valueAxis(context.theme, `KV cache per layer (${axis.unit.label})`, { min: 0, max: axis.max });
        }
        const u = unit.bytes;
        const column = (component: number): (number | string)[] =>
          Array.from({ length: metrics.layerCount }, (_, layer) => (metrics.layerHasKv[layer] === 1 ? metrics.layerBytes[layer * 4 + component]! / u : '-'));
        const series = [{ data: column(0) }, { data: column(1) }, { data: column(2) }, { data: column(3) }];
        return { points: metrics.layerCount, option: { ...option, series } };
      },
    });
  },
};

/** The K and V heatmaps share one colour scale, so their colours compare. */
function heatmapMax(context: ChartContext): number {
  const m = context.buffers.metrics;
  let max = 0;
  for (const grid of [m.heatmapKey, m.heatmapValue]) for (const v of grid) if (v > max) max = v;
  return max;
}

function heatmapChart(side: 'key' | 'value'): ChartSpec {
  const letter = side === 'key' ? 'K' : 'V';
  return {
    id: `error-heatmap-${side}`,
    title: `${letter} quantization error: layer × flush`,
    description: `Relative Frobenius error ‖x−x̂‖/‖x‖ of the ${side}s at each quantize event (the prefill, then every residual flush), per layer; darker is worse, blank layers are not quantized.`,
    minIntervalMs: 500,
    create(): ChartDrawer {
      let columns = -1;
      let scaleMax = 0;
      return countingDrawer({
        setup({ theme, buffers }) {
          columns = -1;
          scaleMax = 0;
          return {
            ...baseOption(theme),
            legend: { show: false },
            tooltip: {
              trigger: 'item', confine: true, backgroundColor: theme.background, borderColor: theme.grid, textStyle: { color: theme.text, fontSize: 11 },
              formatter: (p: { value?: unknown }) => {
                const v = p.value as [number, number, number] | undefined;
                return v === undefined ? '' : `layer ${v[1]} · event column ${v[0]}<br/>${letter} rel. error <b>${formatError(v[2])}</b>`;
              },
            },
            grid: { left: 56, right: 70, top: 12, bottom: 34 },
            xAxis: categoryAxis(theme, 'quantize event (prefill, flushes)', [], { splitArea: { show: false } }),
            yAxis: categoryAxis(theme, 'layer', layerLabels(buffers.metrics.layerCount, buffers.layerKinds), { nameGap: 36 }),
            visualMap: {
              type: 'continuous', min: 0, max: 0.1, calculable: false, orient: 'vertical', right: 4, top: 'middle', itemWidth: 10, itemHeight: 90,
              inRange: { color: [...theme.heat] }, textStyle: { color: theme.muted, fontSize: 10 }, formatter: (v: number) => formatError(v),
            },
            series: [{ name: `${letter} error`, type: 'heatmap', data: [], progressive: 2000, emphasis: { itemStyle: { borderColor: theme.text, borderWidth: 1 } } }],
          };
        },
        update(context) {
          const m = context.buffers.metrics;
          if (m.heatmapColumns === 0) return null;
          const option: Record<string, unknown> = {};
          if (columns !== m.heatmapColumns) {
            columns = m.heatmapColumns;
            const labels = Array.from({ length: columns }, (_, c) => {
              const first = Math.ceil((c * m.heatmapEvents) / columns);
              return first === 0 ? 'prefill' : `#${first}`;
            });
            option['xAxis'] = { data: labels };
          }
          const max = heatmapMax(context);
          if (max > scaleMax) {
            scaleMax = niceCeil(max);
            option['visualMap'] = { max: scaleMax };
          }
          const grid = side === 'key' ? m.heatmapKey : m.heatmapValue;
          const data: [number, number, number][] = [];
          for (let layer = 0; layer < m.layerCount; layer++) {
            for (let c = 0; c < columns; c++) {
              const v = grid[layer * columns + c]!;
              if (!Number.isNaN(v)) data.push([c, layer, v]);
            }
          }
          return { points: data.length, option: { ...option, series: [{ data }] } };
        },
      });
    },
  };
}

export const KEY_ERROR_HEATMAP = heatmapChart('key');
export const VALUE_ERROR_HEATMAP = heatmapChart('value');

export const LATEST_ERROR_CHART: ChartSpec = {
  id: 'error-latest',
  title: 'Latest quantization error per layer',
  description: 'Relative Frobenius error of each layer\'s most recent quantize event, keys and values; unquantized layers have no bar.',
  minIntervalMs: 400,
  create: () => countingDrawer({
    setup({ theme, buffers }) {
      const bar = (name: string, color: string): Record<string, unknown> => ({ name, type: 'bar', data: [], itemStyle: { color }, barMaxWidth: 16, emphasis: { disabled: true } });
      return {
        ...errorBarTooltip(theme),
        xAxis: categoryAxis(theme, 'layer', layerLabels(buffers.metrics.layerCount, buffers.layerKinds)),
        yAxis: errorAxis(theme, 'rel. error ‖x−x̂‖/‖x‖'),
        series: [bar('K', theme.key), bar('V', theme.value)],
      };
    },
    update(context) {
      const m = context.buffers.metrics;
      if (m.stepCount === 0) return null;
      return { points: m.layerCount, option: { series: [{ data: errorBars(m.latestKeyError) }, { data: errorBars(m.latestValueError) }] } };
    },
  }),
};

/** Steps in the rolling window of the per-step rate (single steps are too noisy to read). */
const RATE_WINDOW = 16;

export const SPEED_CHART: ChartSpec = {
  id: 'speed',
  title: 'Decode speed',
  description: `Tokens per second: the running average over all decode steps, and over the last ${RATE_WINDOW} steps (1000 / mean step ms).`,
  minIntervalMs: 300,
  create(): ChartDrawer {
    let rolling = new Float64Array(0);
    return countingDrawer({
      setup({ theme, buffers }) {
        return {
          ...stepChartBase(theme, buffers.metrics.expectedSteps - 1, 'tok/s'),
          yAxis: valueAxis(theme, 'tok/s', { min: 0 }),
          series: [
            line(`last ${RATE_WINDOW} steps`, theme.speed, { width: 1, lineStyle: { opacity: 0.45 } }),
            line('average', theme.speed, { width: 2 }),
          ],
        };
      },
      update(context) {
        const m = context.buffers.metrics;
        if (m.stepCount < 2) return null;
        const [average] = sampleSteps(m, 'totalMs', ['tokensPerSecond']);
        // the rolling rate over decode steps (the prefill is the prompt's, not a decode step)
        const rows = m.steps.length;
        if (rolling.length < 2 * rows) rolling = new Float64Array(Math.max(2 * rows, 2 * rolling.length, 256));
        let sum = 0;
        let count = 0;
        let written = 0;
        const stride = Math.max(1, Math.floor(rows / 1000));
        for (let i = 0; i < rows; i++) {
          const step = m.steps.get('step', i);
          const ms = step === 0 ? NaN : m.steps.get('totalMs', i);
          if (Number.isFinite(ms)) {
            sum += ms;
            count++;
          }
          if (i >= RATE_WINDOW) {
            const old = m.steps.get('step', i - RATE_WINDOW) === 0 ? NaN : m.steps.get('totalMs', i - RATE_WINDOW);
            if (Number.isFinite(old)) {
              sum -= old;
              count--;
            }
          }
          if (i % stride === 0 || i === rows - 1) {
            rolling[written++] = step;
            rolling[written++] = count > 0 && sum > 0 ? (1000 * count) / sum : NaN;
          }
        }
        return { points: average!.length / 2, option: { series: [{ data: rolling.slice(0, written) }, { data: average }] } };
      },
    });
  },
};

export const STEP_TIME_CHART: ChartSpec = {
  id: 'step-time',
  title: 'Where each step\'s time goes',
  description: 'Milliseconds per step, stacked: dequantizing the stores into the model\'s KV inputs, the model itself (session.run), and quantizing / flushing the cache.',
  minIntervalMs: 300,
  create: () => countingDrawer({
    setup({ theme, buffers }) {
      return {
        ...stepChartBase(theme, buffers.metrics.expectedSteps - 1, 'ms'),
        yAxis: valueAxis(theme, 'ms per step', { min: 0 }),
        series: [area('dequantize', theme.dequantize, 'time'), area('model', theme.model, 'time'), area('quantize + flush', theme.quantize, 'time')],
      };
    },
    update(context) {
      const m = context.buffers.metrics;
      if (m.stepCount === 0) return null;
      const [dequantize, model, quantize] = sampleSteps(m, 'totalMs', ['dequantizeMs', 'modelMs', 'quantizeMs']);
      return { points: dequantize!.length / 2, option: { series: [{ data: dequantize }, { data: model }, { data: quantize }] } };
    },
  }),
};

export const REFERENCE_CHART: ChartSpec = {
  id: 'reference',
  title: 'Fidelity against the full-precision reference',
  description: 'KL(reference ‖ quantized) of the next-token distributions per step in nats, the running top-1 agreement in percent, and the steps whose top-1 token differs.',
  minIntervalMs: 300,
  create: () => countingDrawer({
    setup({ theme, buffers }) {
      return {
        ...baseOption(theme),
        grid: { left: 56, right: 48, top: 30, bottom: 34 },
        xAxis: stepAxis(theme, buffers.metrics.expectedSteps - 1),
        yAxis: [
          valueAxis(theme, 'KL (nats)', { min: 0 }),
          valueAxis(theme, 'top-1 agreement (%)', { min: 0, max: 100, position: 'right', nameGap: 32, splitLine: { show: false } }),
        ],
        series: [
          line('KL', theme.kl),
          line('top-1 agreement', theme.agreement, { yAxisIndex: 1 }),
          { name: 'top-1 differs', type: 'scatter', data: [], symbol: 'triangle', symbolSize: 6, itemStyle: { color: theme.flush }, emphasis: { disabled: true } },
        ],
      };
    },
    update(context) {
      const m = context.buffers.metrics;
      if (m.reference() === null) return null;
      const [kl] = sampleSteps(m, 'klDivergence', ['klDivergence']);
      const rows = m.steps.length;
      const stride = Math.max(1, Math.floor(rows / 600));
      const agreement: number[][] = [];
      let agree = 0;
      let seen = 0;
      for (let i = 0; i < rows; i++) {
        const value = m.steps.get('top1Agrees', i);
        if (!Number.isNaN(value)) {
          seen++;
          agree += value;
        }
        if (seen > 0 && (i % stride === 0 || i === rows - 1)) agreement.push([m.steps.get('step', i), (100 * agree) / seen]);
      }
      const differs = stepsWhere(m, 'top1Agrees', 0, 'klDivergence', 300);
      return { points: kl!.length / 2, option: { series: [{ data: kl }, { data: agreement }, { data: differs }] } };
    },
  }),
};
