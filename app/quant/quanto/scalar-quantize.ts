import { roundHalfEven } from '../rounding.js';
import type { GroupLayout } from './grouping.js';
import { codeMax, maxScale, signedZeroMax, signedZeroMin, type RoundToDtype } from './max-optimizer.js';
import { packedRowCount } from './packing.js';
import type { QuantoCodes } from './quanto-codes.js';

/**
 * Plain typed-array quantize kernels for both dtypes (spec §3.1 steps 2–4, fused): min/max, scale and
 * shift per group, then `q = clamp(round((x + shift) / scale), 0, 2^b − 1)` with every op rounded to T,
 * written straight into the packed bytes. They return null when a group holds NaN or ±Inf (the caller
 * reports where).
 *
 * Codes: `round` is half-to-even (spec §3). A zero-range group has scale 0, so `0 / 0 = NaN`; torch's
 * uint8 cast gave 0 for it (golden README), and so does `NaN << s` here. Its dequantized value is still
 * exactly min (a min of −0 comes back as +0: 0·0 − (+0) = +0). An Inf quotient (scale rounded to a subnormal or to 0) clamps to 2^b − 1, as torch.clamp does.
 */

/** Row layout (axis 0): group r is `x[r·g … r·g+g−1]`; codes go to packed row `r mod rowDim`, bits `b·⌊r / rowDim⌋`. */
export function quantizeRowsScalar(x: Float32Array, layout: GroupLayout, bits: number, round: RoundToDtype): QuantoCodes | null {
  const groups = layout.rows;
  const g = layout.cols;
  const qmax = codeMax(bits);
  const rowDim = packedRowCount(groups, bits);
  const packed = new Uint8Array(rowDim * g);
  const scale = new Float32Array(groups);
  const shift = new Float32Array(groups);
  for (let r = 0; r < groups; r++) {
    const start = r * g;
    const end = start + g;
    let min = x[start]!;
    let max = min;
    if (min !== min) return null;
    for (let i = start + 1; i < end; i++) {
      const v = x[i]!;
      // `!(v >= min)` is also true for NaN, which then costs nothing on the common path.
      if (!(v >= min)) {
        if (v !== v) return null;
        min = v;
      } else if (v > max) max = v;
    }
    if (min === -Infinity || max === Infinity) return null;
    if (min === 0) min = signedZeroMin(x, start, 1, g);
    if (max === 0) max = signedZeroMax(x, start, 1, g);
    const s = maxScale(min, max, qmax, round);
    const z = -min;
    scale[r] = s;
    shift[r] = z;
    const target = (r % rowDim) * g - start;
    const bitShift = bits * Math.floor(r / rowDim);
    for (let i = start; i < end; i++) {
      const code = roundHalfEven(round(round(x[i]! + z) / s));
      packed[target + i]! |= (code > qmax ? qmax : code) << bitShift;
    }
  }
  return { packed, scale, shift };
}

/**
 * Column layout (axis −1, and axis 0's one-group case): group `d·A + a` is channel d of the
 * `rows` consecutive token rows of block a. Reads x in memory order, one block at a time, keeping the
 * block's per-channel min and max in two small scratch arrays.
 */
export function quantizeColumnsScalar(x: Float32Array, layout: GroupLayout, bits: number, round: RoundToDtype): QuantoCodes | null {
  const { rows: g, cols, blocks, channels } = layout;
  const qmax = codeMax(bits);
  const rowDim = packedRowCount(g, bits);
  const packed = new Uint8Array(rowDim * cols);
  const scale = new Float32Array(cols);
  const shift = new Float32Array(cols);
  const blockScale = new Float64Array(channels); // [channels] min, then scale, of the current block
  const blockShift = new Float64Array(channels); // [channels] max, then shift
  for (let a = 0; a < blocks; a++) {
    const base = a * g * channels;
    for (let d = 0; d < channels; d++) {
      const v = x[base + d]!;
      if (v !== v) return null;
      blockScale[d] = v;
      blockShift[d] = v;
    }
    for (let j = 1; j < g; j++) {
      const rowStart = base + j * channels;
      for (let d = 0; d < channels; d++) {
        const v = x[rowStart + d]!;
        if (!(v >= blockScale[d]!)) {
          if (v !== v) return null;
          blockScale[d] = v;
        } else if (v > blockShift[d]!) blockShift[d] = v;
      }
    }
    for (let d = 0; d < channels; d++) {
      let min = blockScale[d]!;
      let max = blockShift[d]!;
      if (min === -Infinity || max === Infinity) return null;
      if (min === 0) min = signedZeroMin(x, base + d, channels, g);
      if (max === 0) max = signedZeroMax(x, base + d, channels, g);
      const s = maxScale(min, max, qmax, round);
      blockScale[d] = s;
      blockShift[d] = -min;
      scale[d * blocks + a] = s;
      shift[d * blocks + a] = -min;
    }
    for (let j = 0; j < g; j++) {
      const rowStart = base + j * channels;
      const target = (j % rowDim) * cols + a;
      const bitShift = bits * Math.floor(j / rowDim);
      for (let d = 0; d < channels; d++) {
        const code = roundHalfEven(round(round(x[rowStart + d]! + blockShift[d]!) / blockScale[d]!));
        packed[target + d * blocks]! |= (code > qmax ? qmax : code) << bitShift;
      }
    }
  }
  return { packed, scale, shift };
}
