import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { checkedBits, layerBits } from '../cache/cache-extensions.js';
import type { ModelKvGeometry } from '../config/kv-geometry.js';
import { backendRules } from '../quant/backend-rules.js';
import { flushPeriod, isPositiveInteger } from './check-cache-arguments.js';
import { firstFailingQuantize } from './quantize-lengths.js';
import { quantizeShapeRule, type ShapeFailure, type ShapeRule } from './shape-rules.js';

/** The first quantize call of one run that the backend would refuse. */
export interface QuantizeFailure {
  /** `keys`, `values` or `keys and values` */
  readonly tensors: string;
  /** 0: the prefill; else the decode step whose flush re-quantizes `seq` tokens */
  readonly step: number;
  readonly seq: number;
  readonly failure: ShapeFailure;
}

/**
 * Walks one run's quantize calls in order (the prompt at prefill, then P + k·max(R, 2) tokens at the
 * flush of decode step k·max(R, 2), spec §1.3) and returns the first one the backend refuses among
 * those the run reaches: a flush at a decode step past `decodeSteps` never happens. Keys are
 * quantized before values, so at equal steps the keys' failure is the one raised. The kvscope
 * extensions are followed as the cache applies them: each quantized layer's own K and V bits (K/V
 * bits, a layer map), and sink tokens left out of every call. Null when every call within the run
 * passes, or when the settings are invalid in a way the preflight reports itself (unknown backend,
 * bit width or axis, a group size that is no positive integer).
 */
export function firstFailingQuantizeInRun(
  geometry: ModelKvGeometry, settings: QuantizedCacheSettings, promptLength: number, decodeSteps: number, batch = 1, quantizedLayers?: readonly number[],
): QuantizeFailure | null {
  const rules = backendRules(String(settings.backend));
  if (rules === null || !isPositiveInteger(settings.groupSize) || !isPositiveInteger(promptLength)) return null;
  const dims = { batch, heads: geometry.numKeyValueHeads, headDim: geometry.headDim };
  const period = flushPeriod(settings.residualLength);
  const sink = settings.extensions?.sinkTokens ?? 0;
  let first: QuantizeFailure | null = null;
  for (const bits of distinctBits(settings, quantizedLayers ?? geometry.kvCacheLayers, geometry.numLayers)) {
    const sides = settings.axisKey === settings.axisValue && bits.key === bits.value
      ? [{ axis: settings.axisKey, nbits: bits.key, tensors: 'keys and values' }]
      : [{ axis: settings.axisKey, nbits: bits.key, tensors: 'keys' }, { axis: settings.axisValue, nbits: bits.value, tensors: 'values' }];
    for (const side of sides) {
      if (!rules.axes.includes(side.axis) || !rules.nbits.includes(side.nbits)) return null;
      const rule = afterSink(quantizeShapeRule(rules.backend, side.axis, side.nbits, settings.groupSize, dims), sink);
      const found = firstFailingQuantize(rule, promptLength, period);
      if (found === null || found.step > decodeSteps) continue;
      if (first === null || found.step < first.step) first = { tensors: side.tensors, step: found.step, seq: found.seq, failure: found.failure };
    }
  }
  return first;
}

/** The K/V bit pairs the quantized layers use (one pair without a layer map or K/V bits). */
function distinctBits(settings: QuantizedCacheSettings, layers: readonly number[], numLayers: number): { key: number; value: number }[] {
  const seen = new Map<string, { key: number; value: number }>();
  for (const layer of layers) {
    const bits = layerBits(settings, layer, numLayers);
    if (bits === 'full-precision') continue;
    const checked = checkedBits(bits);
    seen.set(`${checked.key}/${checked.value}`, checked);
  }
  return [...seen.values()];
}

/** The kvscope sink tokens: a quantize call of S tokens takes S − sink of them (none while S ≤ sink). */
function afterSink(rule: ShapeRule, sink: number): ShapeRule {
  if (sink === 0) return rule;
  return { ...rule, check: (seq) => (seq <= sink ? null : rule.check(seq - sink)) };
}
