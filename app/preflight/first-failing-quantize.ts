import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { ModelKvGeometry } from '../config/kv-geometry.js';
import { backendRules } from '../quant/backend-rules.js';
import { flushPeriod, isPositiveInteger } from './check-cache-arguments.js';
import { firstFailingQuantize } from './quantize-lengths.js';
import { quantizeShapeRule, type ShapeFailure } from './shape-rules.js';

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
 * quantized before values, so at equal steps the keys' failure is the one raised. Null when every
 * call within the run passes, or when the settings are invalid in a way the preflight reports itself
 * (unknown backend, bit width or axis, a group size that is no positive integer).
 */
export function firstFailingQuantizeInRun(
  geometry: ModelKvGeometry, settings: QuantizedCacheSettings, promptLength: number, decodeSteps: number, batch = 1,
): QuantizeFailure | null {
  const rules = backendRules(String(settings.backend));
  if (rules === null || !rules.nbits.includes(settings.nbits) || !isPositiveInteger(settings.groupSize) || !isPositiveInteger(promptLength)) return null;
  const dims = { batch, heads: geometry.numKeyValueHeads, headDim: geometry.headDim };
  const period = flushPeriod(settings.residualLength);
  const sides = settings.axisKey === settings.axisValue
    ? [{ axis: settings.axisKey, tensors: 'keys and values' }]
    : [{ axis: settings.axisKey, tensors: 'keys' }, { axis: settings.axisValue, tensors: 'values' }];
  let first: QuantizeFailure | null = null;
  for (const side of sides) {
    if (!rules.axes.includes(side.axis)) return null;
    const rule = quantizeShapeRule(rules.backend, side.axis, settings.nbits, settings.groupSize, dims);
    const found = firstFailingQuantize(rule, promptLength, period);
    if (found === null || found.step > decodeSteps) continue;
    if (first === null || found.step < first.step) first = { tensors: side.tensors, step: found.step, seq: found.seq, failure: found.failure };
  }
  return first;
}
