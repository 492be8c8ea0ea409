import type { ErrorStats } from '../quant/error-stats.js';

/**
 * One call of the quantizer on a layer's keys and values (spec §1.3): the prefill, quantized at once,
 * or a flush, which re-quantizes `dequant(store) ++ residual ++ new`. The errors compare the tensor
 * that was quantized with its dequantization, so a flush's error is measured against already-lossy
 * input (spec §3.5); the drift from the true values shows in the returned tensors instead.
 */
export interface QuantizeEvent {
  /** update index: 0 = prefill, t = the t-th update after it (the golden trace's `step`) */
  readonly step: number;
  readonly kind: 'prefill' | 'flush';
  /** tokens quantized, = the store's length afterwards */
  readonly tokens: number;
  readonly key: ErrorStats;
  readonly value: ErrorStats;
}
