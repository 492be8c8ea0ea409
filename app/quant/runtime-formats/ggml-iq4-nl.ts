import type { GgmlBlockCodec } from './ggml-blocks.js';
import { QK } from './ggml-blocks.js';
import { readHalf, writeHalf } from './ggml-half.js';

/**
 * ggml's iq4_nl: 32 values as 4-bit indices into a fixed non-linear table, one fp16 scale.
 * Layout (ggml/src/ggml-common.h block_iq4_nl): d fp16 | qs u8[16] (index j low, j + 16 high), 18 bytes.
 *
 * Quantization follows ggml/src/ggml-quants.c `quantize_row_iq4_nl_ref`, i.e.
 * `quantize_row_iq4_nl_impl(QK4_NL, 32, …, quant_weights = NULL, ntry = -1)`: weights x², the indices
 * of x / (max / values[0]) by `best_index_int8`, then the least-squares scale Σwqx / Σwq² stored as
 * the fp16 d (with ntry = -1 neither the scale search nor the re-indexing runs). A block whose
 * |x| stays below GROUP_MAX_EPS = 1e-15 gets d = 0 and ggml packs whatever its uninitialized `L`
 * buffer holds as indices (the golden zero row shows stack garbage); kvscope writes index 0 there.
 * Either dequantizes to 0, so only those 16 bytes can differ from a ggml build.
 */
export const IQ4_NL_VALUES = new Int8Array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]);

const f = Math.fround;
const GROUP_MAX_EPS = f(1e-15);

/**
 * ggml-quants.c `best_index_int8(16, values, x)`: the table is sorted, so x takes level i once it
 * reaches the midpoint of levels i − 1 and i (ties go up); compared as 2x ≥ v[i−1] + v[i], exact.
 */
export function bestIndexInt8(x: number): number {
  const x2 = f(x + x);
  let index = 0;
  for (let step = 8; step > 0; step >>= 1) {
    const j = index + step;
    if (x2 >= IQ4_NL_VALUES[j - 1]! + IQ4_NL_VALUES[j]!) index = j;
  }
  return index;
}

/** Creates the codec with its own index scratch. */
export function iq4NlCodec(): GgmlBlockCodec {
  const levels = new Uint8Array(QK); // ggml's L[QK4_NL]: this block's indices
  return {
    blockBytes: 18,
    quantize(x, xAt, out, outAt) {
      let amax = 0;
      let max = 0;
      for (let j = 0; j < QK; j++) {
        const ax = Math.abs(x[xAt + j]!);
        if (ax > amax) {
          amax = ax;
          max = x[xAt + j]!;
        }
      }
      let d = 0;
      if (amax < GROUP_MAX_EPS) {
        levels.fill(0);
      } else {
        const id = f(1 / f(max / IQ4_NL_VALUES[0]!));
        let sumqx = 0;
        let sumq2 = 0;
        for (let j = 0; j < QK; j++) {
          const xj = x[xAt + j]!;
          const l = bestIndexInt8(f(id * xj));
          levels[j] = l;
          const q = IQ4_NL_VALUES[l]!;
          const wq = f(f(xj * xj) * q);
          sumqx = f(sumqx + f(wq * xj));
          sumq2 = f(sumq2 + f(wq * q));
        }
        d = sumq2 > 0 ? f(sumqx / sumq2) : 0;
      }
      writeHalf(out, outAt, d);
      for (let j = 0; j < QK / 2; j++) out[outAt + 2 + j] = levels[j]! | (levels[j + QK / 2]! << 4);
    },
    dequantize(bytes, at, y, yAt) {
      const d = readHalf(bytes, at);
      for (let j = 0; j < QK / 2; j++) {
        const q = bytes[at + 2 + j]!;
        y[yAt + j] = f(d * IQ4_NL_VALUES[q & 0x0f]!);
        y[yAt + j + QK / 2] = f(d * IQ4_NL_VALUES[q >>> 4]!);
      }
    },
  };
}
