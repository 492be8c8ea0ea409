import { QuantizationError } from '../../errors.js';
import { backendRules } from '../backend-rules.js';
import { hqqGroupSizeMessage, nbitsMessage, torchSize } from '../library-messages.js';
import type { KvShape } from '../../tensor/kv-tensor.js';
import type { QuantParams } from '../types.js';
import { hqqGrid } from './grid.js';
import type { HqqAxis, HqqGrid } from './grid.js';

/**
 * What HQQ refuses, checked before any work, in the library's order (spec §1.2, §3.2 "Checks"):
 * bit width (transformers' `HQQQuantizedLayer` message), axis and divisibility (hqq's assertion
 * texts, verbatim, including hqq's spelling "divisble"), then what hqq gets wrong silently or fails
 * on later: bit-packing parity, 3 bits with axis 1, and non-finite input. Every message ends with a fix.
 */
const { messageName, nbits: HQQ_BITS } = backendRules('hqq')!;
const COMMON_GROUP_SIZES = [8, 16, 32, 64, 128, 256, 512];

export function validateHqqParams(shape: KvShape, params: QuantParams): HqqGrid {
  const { nbits, axis, groupSize } = params;
  if (!HQQ_BITS.includes(nbits)) {
    throw new QuantizationError(
      `${nbitsMessage(messageName, HQQ_BITS, nbits)}. kvscope supports the bit widths transformers accepts for HQQ; choose 1, 2, 3, 4 or 8.`,
    );
  }
  if (axis !== 0 && axis !== 1) {
    throw new QuantizationError(
      `axis should be either 0 or 1 (got ${axis}). HQQ axis 1 groups consecutive values, axis 0 groups values ` +
      'strided by N/group_size (transformers\' default); pass 0 or 1.',
    );
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (!Number.isInteger(groupSize) || groupSize < 1) {
    throw new QuantizationError(`the HQQ group size must be a positive integer, got ${groupSize}; use a divisor of the ${count} values, e.g. ${suggestGroupSizes(count, axis, nbits, 64)}.`);
  }
  if (count === 0) {
    throw new QuantizationError(`cannot HQQ-quantize an empty tensor of shape ${torchSize(shape)}; quantize only tensors that hold at least one token.`);
  }
  if (count % groupSize !== 0) {
    throw new QuantizationError(
      `${hqqGroupSizeMessage(shape, groupSize)}. ` +
      `HQQ needs the ${count} values to split into whole groups; choose a group size that divides ${count}, ` +
      `e.g. ${suggestGroupSizes(count, axis, nbits, groupSize)}.`,
    );
  }
  const grid = hqqGrid(count, groupSize, axis);
  if (nbits === 3 && axis === 1) {
    throw new QuantizationError(
      'HQQ 3-bit quantization with axis 1 cannot be dequantized: hqq slices the unpacked rows to ' +
      `shape[0]·shape[1] / group_size = ${Math.floor((shape[0] * shape[1]) / groupSize)} instead of N / group_size = ${grid.groups} ` +
      'for a 4-D KV tensor, and the reshape fails. Use axis 0 with 3 bits, or 2 or 4 bits with axis 1.',
    );
  }
  const planes = nbits === 3 || nbits === 8 ? 1 : 8 / nbits;
  if (grid.rows % planes !== 0) {
    const rowsText = axis === 1 ? `N / group_size = ${count} / ${groupSize} = ${grid.rows}` : `the group size, ${grid.rows}`;
    throw new QuantizationError(
      `HQQ ${nbits}-bit packing stacks ${planes} blocks of rows into each byte, so the code grid needs a row count ` +
      `divisible by ${planes}; axis ${axis} gives ${rowsText} rows. hqq would silently broadcast while packing and then ` +
      `fail in dequantize. Choose group size ${suggestGroupSizes(count, axis, nbits, groupSize)}` +
      (axis === 1 ? ', or axis 0.' : '.'),
    );
  }
  return grid;
}

/** The first non-finite value, checked before quantizing: hqq would spread NaN over its whole group. */
export function checkFinite(values: Float32Array): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v - v !== 0) throw nonFinite(i, v);
  }
}

export function nonFinite(index: number, value: number): QuantizationError {
  return new QuantizationError(
    `cannot HQQ-quantize a tensor holding ${value} (first at flat index ${index}). hqq would turn the min/max of its ` +
    'group, and so its scale and zero, into NaN or infinity; fix the values upstream (check the model output) ' +
    'or keep this layer in full precision.',
  );
}

/** Up to three common group sizes, nearest to `wanted`, that pass every check above. */
export function suggestGroupSizes(count: number, axis: HqqAxis, nbits: number, wanted: number): string {
  const planes = nbits === 3 || nbits === 8 || !Number.isInteger(8 / nbits) ? 1 : 8 / nbits;
  const valid = COMMON_GROUP_SIZES.filter((g) => {
    if (count % g !== 0) return false;
    const rows = axis === 1 ? count / g : g;
    return rows % planes === 0;
  });
  if (valid.length === 0) return 'a divisor of the value count (no common power of two fits this shape)';
  valid.sort((a, b) => Math.abs(Math.log2(a / wanted)) - Math.abs(Math.log2(b / wanted)) || a - b);
  return valid.slice(0, 3).join(' or ');
}
