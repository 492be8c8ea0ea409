import { QuantizationError } from '../../errors.js';
import type { KvShape } from '../../tensor/kv-tensor.js';

/**
 * Throws the error for a KV tensor that holds NaN or ±Inf. The kernels only notice that some group's
 * min or max is not finite; this slow scan runs once, on the error path, to say where and how many.
 *
 * torch does not refuse such input: a NaN or Inf makes its group's scale or shift NaN/Inf, and the
 * whole group dequantizes to NaN. kvscope refuses instead, because the cache would silently spread
 * NaN into every later attention step through requantization (spec §1.3, §3.5).
 */
export function throwNonFiniteInput(data: Float32Array, shape: KvShape): never {
  let nanCount = 0;
  let infCount = 0;
  let first = -1;
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if (v - v === 0) continue; // finite
    if (v !== v) nanCount++;
    else infCount++;
    if (first < 0) first = i;
  }
  const firstValue = first >= 0 ? String(data[first]) : 'none';
  throw new QuantizationError(
    `quanto cannot quantize a KV tensor with non-finite values: found ${nanCount} NaN and ${infCount} ±Infinity ` +
      `among ${data.length} values of shape [${shape.join(', ')}]; the first is ${firstValue} at ` +
      `[${unravel(Math.max(first, 0), shape).join(', ')}] (flat index ${first}). ` +
      'torch would turn every affected group into NaN; check the model output (overflow in float16?) before caching it.',
  );
}

/** `[b, h, s, d]` of a row-major flat index. */
export function unravel(index: number, shape: KvShape): [number, number, number, number] {
  const [, heads, seq, headDim] = shape;
  const d = index % headDim;
  const s = Math.floor(index / headDim) % seq;
  const h = Math.floor(index / (headDim * seq)) % heads;
  const b = Math.floor(index / (headDim * seq * heads));
  return [b, h, s, d];
}
