import { QuantizationError } from '../../errors.js';
import { backendRules } from '../backend-rules.js';
import { nbitsMessage } from '../library-messages.js';
import type { QuantParams } from '../types.js';

/** quanto's KV qtypes: qint2 and qint4 (spec §1.5: transformers maps nbits 4 → qint4, anything else → qint2). */
export type QuantoBits = 2 | 4;
/** The two axes `group()` accepts (spec §3.1). */
export type QuantoAxis = 0 | -1;

export interface QuantoParams {
  readonly nbits: QuantoBits;
  readonly axis: QuantoAxis;
  readonly groupSize: number;
}

/**
 * Checks the parameters in the library's order (spec §1.2: nbits, then axis) with the library's exact
 * texts first. transformers validates nbits and axes in the layer constructor; the axis text here is
 * AffineOptimizer's, because a quantizer cannot know whether it holds keys or values. The group size
 * has no check in the library (a bad one surfaces as a Python TypeError or ZeroDivisionError), so its
 * message is kvscope's own.
 */
export function validateQuantoParams(params: QuantParams): QuantoParams {
  const { nbits, axis, groupSize } = params;
  if (nbits !== 2 && nbits !== 4) {
    const { messageName, nbits: allowed } = backendRules('quanto')!;
    throw new QuantizationError(
      `${nbitsMessage(messageName, allowed, nbits)}. ` +
        'quanto stores KV caches as qint2 or qint4 only; use nbits 2 or 4, or the hqq backend for 1, 3 or 8 bits.',
    );
  }
  if (axis !== 0 && axis !== -1) {
    throw new QuantizationError(
      `axis parameter must be 0 (first axis) or -1 (last axis). Got ${axis}: quanto groups along head_dim runs ` +
        '(axis 0) or along tokens of one channel (axis -1); axis 1 is HQQ\'s numbering, use -1 for quanto.',
    );
  }
  if (!Number.isSafeInteger(groupSize) || groupSize <= 0) {
    throw new QuantizationError(
      `quanto group size must be a positive integer, got ${groupSize}. transformers' default q_group_size is 64; ` +
        'choose a size that divides kv_heads·seq·head_dim (axis 0) or batch·kv_heads·seq (axis -1).',
    );
  }
  return { nbits, axis, groupSize };
}
