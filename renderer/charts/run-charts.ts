import { byteUnitFor, formatError, type ByteUnit } from '../format/units.js';
import { layerKindStyle, layerLabels } from '../format/layer-kinds.js';
import { LAYER_FIELDS, type RunMetrics } from '../metrics/run-metrics.js';
import { countingDrawer, errorAxis, errorBars, errorBarTooltip, layerBarTooltip, lineSeries, stepChartBase, withTooltip, type LineExtra } from './chart-parts.js';
import type { ChartContext, ChartDrawer, ChartSpec } from './chart-spec.js';
import { baseOption, categoryAxis, niceCeil, stepAxis, valueAxis } from './chart-theme.js';
import type { ChartOption } from './echarts-core.js';
import { heatBands, valueRange, type ChartScale } from './heat-scale.js';
import { sampleSteps, spread, stepsWhere } from './sample-steps.js';
import { escapeHtml, stepTooltipByUnit } from './tooltip.js';

/** Flush markers drawn on the timeline at most (a 2-token residual flushes every other step). */
const MAX_FLUSH_MARKERS = 80;

/** Unlike the comparison charts, which draw once, these lines are redrawn while streaming: large mode on. */
function line(name: string, color: string, extra: LineExtra = {}): Record<string, unknown> {
  return lineSeries(name, color, { large: true, ...extra });
}

function area(name: string, color: string, stack: string, extra: LineExtra = {}): Record<string, unknown> {
  return line(name, color, { stack, width: 1, areaStyle: { color, opacity: 0.55 }, ...extra });
}

/** The dynamic cache a quantized cache replaces is in the graph's own KV dtype: `fp32` or `fp16`. */
export function dtypeLabel(metrics: RunMetrics): 'fp32' | 'fp16' {
  return metrics.kvBytesPerValue === 2 ? 'fp16' : 'fp32';
}

/**
 * The KV axis is fixed from the first step on, at the dynamic cache (in the graph's dtype) of the
 * run's last step: what an uncompressed cache would hold. Should a series outgrow it (kvscope's
 * buffers grow by doubling), ECharts' data extent takes over instead of clipping.
 */
function kvAxis(metrics: RunMetrics, perLayer: boolean): { unit: ByteUnit; max: (extent: { max: number }) => number } | null {
  const projected = metrics.projectedFp16Bytes();
  if (projected === null) return null;
  let kvLayers = 0;
  for (const has of metrics.layerHasKv) kvLayers += has;
  const dtypeBytes = (projected / 2) * metrics.kvBytesPerValue;
  const bound = perLayer ? dtypeBytes / Math.max(1, kvLayers) : dtypeBytes;
  const unit = byteUnitFor(bound);
  const fixed = niceCeil((bound * 1.05) / unit.bytes);
  return { unit, max: (extent) => (extent.max > fixed ? niceCeil(extent.max) : fixed) };
}

/** Series of the memory chart, in order: the top panel's KV figures, then the bottom panel's process memory. */
const KV_SERIES = 8;

export const KV_MEMORY_CHART: ChartSpec = {
  id: 'kv-memory',
  title: 'Memory over steps',
  description: 'Top: the KV cache as stored (packed codes, scale/zero, full-precision tokens, stacked), what is fed to the model as KV inputs each step, '
    + 'kvscope\'s own buffers, and two baselines: the dynamic cache in the graph\'s KV dtype (what this cache replaces) and in fp16; red lines mark residual flushes. '
    + 'Bottom: the generation process (resident set, V8 external memory, array buffers).',
  minIntervalMs: 200,
  create(): ChartDrawer {
    let kvUnit: ByteUnit | null = null;
    let processUnit: ByteUnit | null = null;
    let legend = '';
    const unitOf = (series: number): string => (series < KV_SERIES ? kvUnit?.label ?? 'B' : processUnit?.label ?? 'B');
    return countingDrawer({
      describe: () => legend,
      setup({ theme, buffers }) {
        kvUnit = null;
        processUnit = null;
        const m = buffers.metrics;
        const lastStep = m.expectedSteps - 1;
        const dtype = dtypeLabel(m);
        const bottomAxis = stepAxis(theme, lastStep);
        legend = `KV cache: codes, scale/zero, full precision (stored), fed to the model (KV inputs), kvscope buffers, ${dtype} dynamic cache (replaced)` +
          `${dtype === 'fp16' ? '' : ', fp16 dynamic cache'}, residual flush; process: RSS, V8 external, array buffers`;
        return {
          ...withTooltip(theme, { formatter: stepTooltipByUnit(unitOf) }),
          legend: { ...(baseOption(theme)['legend'] as object), top: 0, left: 8, right: 8 },
          axisPointer: { link: [{ xAxisIndex: 'all' }] },
          grid: [
            { left: 64, right: 18, top: 66, height: '44%' },
            { left: 64, right: 18, top: '73%', bottom: 30 },
          ],
          xAxis: [
            { ...stepAxis(theme, lastStep), gridIndex: 0, name: '', axisLabel: { show: false } },
            { ...bottomAxis, gridIndex: 1 },
          ],
          yAxis: [
            valueAxis(theme, 'KV cache', { min: 0, gridIndex: 0, nameGap: 46 }),
            valueAxis(theme, 'process', { min: 0, gridIndex: 1, nameGap: 46, splitNumber: 3 }),
          ],
          series: [
            area('codes', theme.codes, 'kv'),
            area('scale/zero', theme.metadata, 'kv'),
            area('full precision', theme.fullPrecision, 'kv'),
            // wide and translucent: it equals the dtype baseline wherever every layer is fed its whole history
            line('fed to the model (KV inputs)', theme.materialized, { width: 5, lineStyle: { opacity: 0.4, cap: 'round' } }),
            line('kvscope buffers', theme.working, { width: 1.5, lineStyle: { type: 'dotted' } }),
            line(`${dtype} dynamic cache (replaced)`, theme.baselineDtype, { width: 1.2, lineStyle: { type: 'dashed' } }),
            line(dtype === 'fp16' ? 'fp16 dynamic cache (same as replaced)' : 'fp16 dynamic cache', theme.baselineFp16, { width: 1.2, lineStyle: { type: [2, 3] } }),
            {
              ...line('residual flush', theme.flushMark, { width: 0 }),
              markLine: { silent: true, symbol: 'none', label: { show: false }, lineStyle: { color: theme.flushMark, type: 'solid', width: 1, opacity: 0.55 }, data: [] },
            },
            line('RSS', theme.rss, { xAxisIndex: 1, yAxisIndex: 1 }),
            line('V8 external', theme.external, { xAxisIndex: 1, yAxisIndex: 1 }),
            line('array buffers', theme.arrayBuffers, { xAxisIndex: 1, yAxisIndex: 1, lineStyle: { type: 'dashed' } }),
          ],
        };
      },
      update(context) {
        const m = context.buffers.metrics;
        const option: ChartOption & { yAxis?: unknown } = {};
        if (kvUnit === null) {
          const axis = kvAxis(m, false);
          if (axis === null) return null;
          kvUnit = axis.unit;
          processUnit = byteUnitFor(Math.max(1, m.steps.last('rssBytes')));
          option.yAxis = [
            { name: `KV cache (${axis.unit.label})`, max: axis.max },
            { name: `process (${processUnit.label})` },
          ];
        }
        const dtypeColumn = m.kvBytesPerValue === 2 ? 'fp16BaselineBytes' : 'fp32BaselineBytes';
        const kv = sampleSteps(m, 'totalBytes', ['codeBytes', 'metadataBytes', 'fullPrecisionBytes', 'materializedKvBytes', 'workingBytes', dtypeColumn, 'fp16BaselineBytes'], kvUnit.bytes);
        const process = sampleSteps(m, 'rssBytes', ['rssBytes', 'externalBytes', 'arrayBuffersBytes'], processUnit!.bytes);
        const flushes = spread(m.flushSteps(), MAX_FLUSH_MARKERS).map((step) => ({ xAxis: step }));
        // an fp16 graph's dynamic cache is the fp16 one: its second baseline would only repeat it
        const fp16 = m.kvBytesPerValue === 2 ? new Float64Array(0) : kv[6]!;
        const series = [
          { data: kv[0] }, { data: kv[1] }, { data: kv[2] }, { data: kv[3] }, { data: kv[4] }, { data: kv[5] }, { data: fp16 },
          { data: [], markLine: { data: flushes } },
          { data: process[0] }, { data: process[1] }, { data: process[2] },
        ];
        return { points: kv[0]!.length / 2, option: { ...option, series } };
      },
    });
  },
};

export const KV_LAYERS_CHART: ChartSpec = {
  id: 'kv-layers',
  title: 'KV memory per layer',
  description: 'Bytes each decoder layer stores at the latest step, by component, with the dynamic cache in the graph\'s KV dtype and in fp16 marked; '
    + 'a sliding-window layer kept in full precision stores what transformers keeps (its last window − 1 tokens), and a diamond marks what the graph is fed for it. '
    + 'Layers without a KV cache stay empty.',
  minIntervalMs: 400,
  create(): ChartDrawer {
    let unit: ByteUnit | null = null;
    let fedShown = false;
    return countingDrawer({
      setup({ theme, buffers }) {
        unit = null;
        const m = buffers.metrics;
        const labels = layerLabels(m.layerCount, buffers.layerKinds);
        const bar = (name: string, color: string): Record<string, unknown> => ({ name, type: 'bar', stack: 'kv', data: [], itemStyle: { color }, barMaxWidth: 28, emphasis: { disabled: true } });
        const marker = (name: string, color: string, symbol: string, size: number | number[]): Record<string, unknown> =>
          ({ name, type: 'line', data: [], symbol, symbolSize: size, lineStyle: { opacity: 0 }, itemStyle: { color }, emphasis: { disabled: true } });
        const names = ['codes', 'scale/zero', 'full precision', `${dtypeLabel(m)} dynamic cache (replaced)`, ...(m.kvBytesPerValue === 2 ? [] : ['fp16 dynamic cache'])];
        fedShown = false;
        return {
          ...layerBarTooltip(theme, (v) => `${v.toFixed(3)} ${unit?.label ?? 'B'}`, '–'),
          legend: { ...(baseOption(theme)['legend'] as object), data: names },
          grid: { left: 56, right: 18, top: 52, bottom: 34 },
          xAxis: categoryAxis(theme, 'layer', labels),
          yAxis: valueAxis(theme, 'KV cache per layer', { min: 0 }),
          series: [
            bar('codes', theme.codes), bar('scale/zero', theme.metadata), bar('full precision', theme.fullPrecision),
            marker(`${dtypeLabel(m)} dynamic cache (replaced)`, theme.baselineDtype, 'rect', [16, 2]),
            marker('fp16 dynamic cache', theme.baselineFp16, 'rect', [16, 2]),
            marker('fed to the graph (sliding layer)', theme.materialized, 'diamond', 9),
          ],
        };
      },
      update(context) {
        const m = context.buffers.metrics;
        if (m.stepCount === 0) return null;
        const option: Record<string, unknown> = {};
        if (unit === null) {
          const axis = kvAxis(m, true);
          if (axis === null) return null;
          unit = axis.unit;
          option['yAxis'] = { name: `KV cache per layer (${axis.unit.label})`, max: axis.max };
        }
        const u = unit.bytes;
        const column = (field: number, show: (value: number) => boolean = () => true): (number | string)[] =>
          Array.from({ length: m.layerCount }, (_, layer) => {
            const value = m.layerBytes[layer * LAYER_FIELDS + field]!;
            return m.layerHasKv[layer] === 1 && show(value) ? value / u : '-';
          });
        const dtypeField = m.kvBytesPerValue === 2 ? 3 : 4;
        // the "fed to the graph" marker is in the legend only for a model with sliding layers
        if (!fedShown && m.layerWindow.some((window) => window > 0)) {
          fedShown = true;
          option['legend'] = { data: ['codes', 'scale/zero', 'full precision', `${dtypeLabel(m)} dynamic cache (replaced)`, ...(m.kvBytesPerValue === 2 ? [] : ['fp16 dynamic cache']), 'fed to the graph (sliding layer)'] };
        }
        const series = [
          { data: column(0) }, { data: column(1) }, { data: column(2) }, { data: column(dtypeField) },
          { data: m.kvBytesPerValue === 2 ? [] : column(3) },
          { data: column(5, (value) => !Number.isNaN(value)) },
        ];
        return { points: m.layerCount, option: { ...option, series } };
      },
    });
  },
};

/** The K and V heatmaps (and a compared run's) share one colour range, so their colours compare. */
function heatRange(context: ChartContext): { low: number; high: number } {
  const grids = [context.buffers.metrics.heatmapKey, context.buffers.metrics.heatmapValue];
  if (context.other !== undefined) grids.push(context.other.metrics.heatmapKey, context.other.metrics.heatmapValue);
  return valueRange(grids);
}

/** What one heatmap column holds: the prefill, one flush at its step, or several flushes merged. */
export function heatColumnLabel(m: RunMetrics, column: number): { axis: string; tooltip: string } {
  const first = m.heatmapFirstEvent[column] ?? -1;
  const last = m.heatmapLastEvent[column] ?? -1;
  const firstStep = m.heatmapFirstStep[column] ?? -1;
  const lastStep = m.heatmapLastStep[column] ?? -1;
  if (first === -1) {
    const expected = Math.ceil((column * m.heatmapEvents) / Math.max(1, m.heatmapColumns));
    return { axis: expected === 0 ? 'prefill' : `#${expected}`, tooltip: 'not reached yet' };
  }
  if (first === last) {
    return first === 0
      ? { axis: 'prefill', tooltip: 'the prefill (step 0)' }
      : { axis: String(firstStep), tooltip: `flush #${first} at step ${firstStep}` };
  }
  const from = first === 0 ? 'the prefill' : `flush #${first}`;
  return { axis: `${firstStep}–${lastStep}`, tooltip: `${from} to flush #${last}, steps ${firstStep}–${lastStep} (the largest error shown)` };
}

function heatmapChart(side: 'key' | 'value'): ChartSpec {
  const letter = side === 'key' ? 'K' : 'V';
  return {
    id: `error-heatmap-${side}`,
    title: `${letter} quantization error: layer × flush`,
    description: `Relative Frobenius error ‖x−x̂‖/‖x‖ of the ${side}s at each quantize event (the prefill, then every residual flush, by step), per layer. `
      + 'The numbered scale beside it gives each colour\'s error (faint = small, intense = large, in light and dark alike); blank layers are not quantized.',
    minIntervalMs: 500,
    scales: ['linear', 'log'],
    create(): ChartDrawer {
      let columns = -1;
      let bandsKey = '';
      let scaleWords = '';
      let drawnHeatmapVersion = -1;
      return countingDrawer({
        describe: () => scaleWords,
        setup(context) {
          const { theme, buffers } = context;
          columns = -1;
          bandsKey = '';
          drawnHeatmapVersion = -1;
          const m = buffers.metrics;
          const kinds = buffers.layerKinds;
          return {
            ...baseOption(theme),
            legend: { show: false },
            tooltip: {
              trigger: 'item', confine: true, backgroundColor: theme.background, borderColor: theme.grid, textStyle: { color: theme.text, fontSize: 11 },
              formatter: (p: { value?: unknown }) => {
                const v = p.value as [number, number, number] | undefined;
                if (v === undefined) return '';
                const kind = kinds[v[1]] === undefined ? '' : ` (${escapeHtml(layerKindStyle(kinds[v[1]]!).name)})`;
                return `layer ${v[1]}${kind} · ${heatColumnLabel(m, v[0]).tooltip}<br/>${letter} rel. error <b>${formatError(v[2])}</b>`;
              },
            },
            grid: { left: 56, right: 138, top: 12, bottom: 36 },
            xAxis: categoryAxis(theme, `quantize event (step) · ${context.scale} colour scale`, [], { splitArea: { show: false } }),
            yAxis: categoryAxis(theme, 'layer', layerLabels(m.layerCount, kinds), { nameGap: 36 }),
            visualMap: {
              type: 'piecewise', orient: 'vertical', right: 2, top: 'middle', itemWidth: 12, itemHeight: 9, itemGap: 3,
              pieces: [], textStyle: { color: theme.muted, fontSize: 9.5 }, showLabel: true, selectedMode: false,
            },
            series: [{ name: `${letter} error`, type: 'heatmap', data: [], progressive: 2000, emphasis: { itemStyle: { borderColor: theme.text, borderWidth: 1 } } }],
          };
        },
        update(context) {
          const m = context.buffers.metrics;
          // 3,072 cells rebuilt for nothing cost a frame: steps without a quantize event change no cell
          if (m.heatmapColumns === 0 || m.heatmapVersion === drawnHeatmapVersion) return null;
          drawnHeatmapVersion = m.heatmapVersion;
          const option: Record<string, unknown> = {};
          columns = m.heatmapColumns;
          option['xAxis'] = { data: Array.from({ length: columns }, (_, c) => heatColumnLabel(m, c).axis) };
          const { low, high } = heatRange(context);
          const bands = heatBands(low, high, context.scale, context.theme.heat);
          const key = bands.map((band) => band.label).join('|');
          if (key !== bandsKey) {
            bandsKey = key;
            scaleWords = `${context.scale} colour scale, relative error: ${bands.map((band) => band.label).join('; ')}`;
            // ECharts lists pieces top to bottom in the order given: largest first, as a colour bar reads
            // the top band is closed, so that the largest error falls inside it
            option['visualMap'] = {
              pieces: [...bands].reverse().map((band, i) => (i === 0 ? { gte: band.min, lte: band.max } : { gte: band.min, lt: band.max }))
                .map((piece, i) => ({ ...piece, label: bands[bands.length - 1 - i]!.label, color: bands[bands.length - 1 - i]!.color })),
            };
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
  scales: ['linear', 'log'],
  create: () => countingDrawer({
    setup({ theme, buffers, scale }) {
      const bar = (name: string, color: string): Record<string, unknown> => ({ name, type: 'bar', data: [], itemStyle: { color }, barMaxWidth: 16, emphasis: { disabled: true } });
      return {
        ...errorBarTooltip(theme),
        xAxis: categoryAxis(theme, 'layer', layerLabels(buffers.metrics.layerCount, buffers.layerKinds)),
        yAxis: scale === 'log' ? { ...errorAxis(theme, 'rel. error ‖x−x̂‖/‖x‖ (log)'), type: 'log', min: undefined } : errorAxis(theme, 'rel. error ‖x−x̂‖/‖x‖'),
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
            line(`last ${RATE_WINDOW} steps`, theme.speedRolling, { width: 1 }),
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

const TIME_PARTS = ['dequantizeMs', 'modelMs', 'quantizeMs', 'referenceMs', 'otherMs'] as const;

export const STEP_TIME_CHART: ChartSpec = {
  id: 'step-time',
  title: 'Where each step\'s time goes',
  description: 'Milliseconds per step, in parts that add up to the step\'s whole time: dequantizing the stores into the model\'s KV inputs, the model itself (session.run), '
    + 'quantizing and flushing the cache, the reference lane\'s replay (when on), and the rest (sampling, detokenizing, bookkeeping). '
    + 'Linear: stacked to the total; log: each part on its own line, with the total.',
  minIntervalMs: 300,
  scales: ['linear', 'log'],
  create: () => countingDrawer({
    setup({ theme, buffers, scale }) {
      const names = ['dequantize', 'model', 'quantize + flush', 'reference lane', 'other'];
      const colors = [theme.dequantize, theme.model, theme.quantize, theme.referenceTime, theme.otherTime];
      const stacked = scale === 'linear';
      const parts = names.map((name, i) => (stacked ? area(name, colors[i]!, 'time') : line(name, colors[i]!, { width: 1.4 })));
      return {
        ...stepChartBase(theme, buffers.metrics.expectedSteps - 1, 'ms'),
        yAxis: stacked ? valueAxis(theme, 'ms per step', { min: 0 }) : valueAxis(theme, 'ms per step (log)', { type: 'log', logBase: 10 }),
        series: stacked ? parts : [...parts, line('whole step', theme.text, { width: 1, lineStyle: { type: 'dashed' } })],
      };
    },
    update(context) {
      const m = context.buffers.metrics;
      if (m.stepCount === 0) return null;
      const sampled = sampleSteps(m, 'totalMs', [...TIME_PARTS, 'totalMs']);
      // a log axis has no place for 0 ms (no reference lane, no flush): those points are left out
      const positive = (data: Float64Array): Float64Array => {
        if (context.scale === 'linear') return data;
        const copy = Float64Array.from(data);
        for (let i = 1; i < copy.length; i += 2) if (!(copy[i]! > 0)) copy[i] = NaN;
        return copy;
      };
      const series = sampled.slice(0, context.scale === 'linear' ? TIME_PARTS.length : TIME_PARTS.length + 1).map((data) => ({ data: positive(data) }));
      return { points: sampled[0]!.length / 2, option: { series } };
    },
  }),
};

export const REFERENCE_CHART: ChartSpec = {
  id: 'reference',
  title: 'Fidelity against the full-precision reference',
  description: 'KL(reference ‖ quantized) of the next-token distributions per step in nats, the running top-1 agreement in percent, and the steps whose top-1 token differs.',
  minIntervalMs: 300,
  scales: ['linear', 'log'],
  create: () => countingDrawer({
    setup({ theme, buffers, scale }) {
      return {
        ...baseOption(theme),
        grid: { left: 56, right: 48, top: 40, bottom: 34 },
        xAxis: stepAxis(theme, buffers.metrics.expectedSteps - 1),
        yAxis: [
          scale === 'log' ? valueAxis(theme, 'KL (nats, log)', { type: 'log' }) : valueAxis(theme, 'KL (nats)', { min: 0 }),
          valueAxis(theme, 'top-1 agreement (%)', { min: 0, max: 100, position: 'right', nameGap: 32, splitLine: { show: false } }),
        ],
        series: [
          line('KL', theme.kl),
          line('top-1 agreement', theme.agreement, { yAxisIndex: 1 }),
          { name: 'top-1 differs', type: 'scatter', data: [], symbol: 'triangle', symbolSize: 7, itemStyle: { color: theme.differs }, emphasis: { disabled: true } },
        ],
      };
    },
    update(context) {
      const m = context.buffers.metrics;
      if (m.reference() === null) return null;
      const [kl] = sampleSteps(m, 'klDivergence', ['klDivergence']);
      if (context.scale === 'log') for (let i = 1; i < kl!.length; i += 2) if (!(kl![i]! > 0)) kl![i] = NaN;
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
      const differs = stepsWhere(m, 'top1Agrees', 0, 'klDivergence', 300).filter(([, y]) => context.scale === 'linear' || y! > 0);
      return { points: kl!.length / 2, option: { series: [{ data: kl }, { data: agreement }, { data: differs }] } };
    },
  }),
};

/** The names of a scale choice, for the chart's switch. */
export const SCALE_LABEL: Readonly<Record<ChartScale, string>> = { linear: 'linear', log: 'log' };

export type { ChartScale };
