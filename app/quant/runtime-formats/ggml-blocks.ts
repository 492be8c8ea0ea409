import { readHalf, writeHalf } from './ggml-half.js';

/**
 * ggml's legacy block formats, operation for operation as ggml/src/ggml-quants.c's reference
 * functions (`quantize_row_q8_0_ref`, `_q4_0_ref`, `_q4_1_ref`, `_q5_0_ref`, `_q5_1_ref` and the
 * `dequantize_row_*` twins), which the golden vectors of ../shared/golden/runtime-formats/llama.cpp
 * were made with. Every intermediate is a C `float`, so each operation is rounded with Math.fround;
 * `(int8_t)` / `(uint8_t)` casts truncate toward zero; `roundf` rounds half away from zero.
 *
 * A block is QK = 32 values. Layouts (ggml/src/ggml-common.h, little-endian):
 *   q8_0: d fp16 | qs int8[32]                                    34 bytes
 *   q4_0: d fp16 | qs u8[16] (low nibble j, high nibble j + 16)   18 bytes
 *   q4_1: d fp16 | m fp16 | qs u8[16]                             20 bytes
 *   q5_0: d fp16 | qh u32 (bit j: 5th bit of value j) | qs u8[16] 22 bytes
 *   q5_1: d fp16 | m fp16 | qh u32 | qs u8[16]                    24 bytes
 * Dequantization is exact in float32 (a ≤ 8-bit integer times an fp16 scale needs ≤ 19 bits), so
 * `x·d + m` rounds once whether or not a compiler fuses it.
 */
export const QK = 32;

export interface GgmlBlockCodec {
  readonly blockBytes: number;
  /** 32 values of `x` from `xAt` → one block of `out` at `outAt` */
  quantize(x: Float32Array, xAt: number, out: Uint8Array, outAt: number): void;
  /** one block of `bytes` at `at` → 32 values of `y` from `yAt` */
  dequantize(bytes: Uint8Array, at: number, y: Float32Array, yAt: number): void;
}

const f = Math.fround;

/** C's roundf: half away from zero. */
function roundAway(v: number): number {
  const r = Math.round(Math.abs(v));
  return v < 0 ? -r : r;
}

/** The value of largest magnitude, first one on ties (`if (amax < fabsf(v))`), as q4_0 and q5_0 pick it. */
function signedAbsMax(x: Float32Array, at: number): number {
  let amax = 0;
  let max = 0;
  for (let j = 0; j < QK; j++) {
    const v = x[at + j]!;
    if (amax < Math.abs(v)) {
      amax = Math.abs(v);
      max = v;
    }
  }
  return max;
}

/** min and max over the block, starting from ±FLT_MAX as q4_1 and q5_1 do. */
const FLT_MAX = 3.4028234663852886e38;
function blockMinMax(x: Float32Array, at: number, out: Float64Array): void {
  let min = FLT_MAX;
  let max = -FLT_MAX;
  for (let j = 0; j < QK; j++) {
    const v = x[at + j]!;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  out[0] = min;
  out[1] = max;
}
const minMax = new Float64Array(2);

export const q8_0: GgmlBlockCodec = {
  blockBytes: 34,
  quantize(x, xAt, out, outAt) {
    let amax = 0;
    for (let j = 0; j < QK; j++) {
      const a = Math.abs(x[xAt + j]!);
      amax = amax > a ? amax : a; // MAX(amax, fabsf(v))
    }
    const d = f(amax / 127);
    const id = d !== 0 ? f(1 / d) : 0;
    writeHalf(out, outAt, d);
    for (let j = 0; j < QK; j++) out[outAt + 2 + j] = roundAway(f(x[xAt + j]! * id)) & 0xff;
  },
  dequantize(bytes, at, y, yAt) {
    const d = readHalf(bytes, at);
    for (let j = 0; j < QK; j++) y[yAt + j] = f(((bytes[at + 2 + j]! << 24) >> 24) * d);
  },
};

export const q4_0: GgmlBlockCodec = {
  blockBytes: 18,
  quantize(x, xAt, out, outAt) {
    const d = f(signedAbsMax(x, xAt) / -8);
    const id = d !== 0 ? f(1 / d) : 0;
    writeHalf(out, outAt, d);
    for (let j = 0; j < QK / 2; j++) {
      const xi0 = Math.min(15, f(f(x[xAt + j]! * id) + 8.5) | 0);
      const xi1 = Math.min(15, f(f(x[xAt + QK / 2 + j]! * id) + 8.5) | 0);
      out[outAt + 2 + j] = xi0 | (xi1 << 4);
    }
  },
  dequantize(bytes, at, y, yAt) {
    const d = readHalf(bytes, at);
    for (let j = 0; j < QK / 2; j++) {
      const q = bytes[at + 2 + j]!;
      y[yAt + j] = f(((q & 0x0f) - 8) * d);
      y[yAt + j + QK / 2] = f(((q >>> 4) - 8) * d);
    }
  },
};

export const q4_1: GgmlBlockCodec = {
  blockBytes: 20,
  quantize(x, xAt, out, outAt) {
    blockMinMax(x, xAt, minMax);
    const min = minMax[0]!;
    const d = f(f(minMax[1]! - min) / 15);
    const id = d !== 0 ? f(1 / d) : 0;
    writeHalf(out, outAt, d);
    writeHalf(out, outAt + 2, min);
    for (let j = 0; j < QK / 2; j++) {
      const xi0 = Math.min(15, f(f(f(x[xAt + j]! - min) * id) + 0.5) | 0);
      const xi1 = Math.min(15, f(f(f(x[xAt + QK / 2 + j]! - min) * id) + 0.5) | 0);
      out[outAt + 4 + j] = xi0 | (xi1 << 4);
    }
  },
  dequantize(bytes, at, y, yAt) {
    const d = readHalf(bytes, at);
    const m = readHalf(bytes, at + 2);
    for (let j = 0; j < QK / 2; j++) {
      const q = bytes[at + 4 + j]!;
      y[yAt + j] = f((q & 0x0f) * d + m);
      y[yAt + j + QK / 2] = f((q >>> 4) * d + m);
    }
  },
};

/** q5's fifth bits: value j's in bit j of a little-endian u32. */
function writeHighBits(out: Uint8Array, at: number, qh: number): void {
  out[at] = qh & 0xff;
  out[at + 1] = (qh >>> 8) & 0xff;
  out[at + 2] = (qh >>> 16) & 0xff;
  out[at + 3] = qh >>> 24;
}

function readHighBits(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

export const q5_0: GgmlBlockCodec = {
  blockBytes: 22,
  quantize(x, xAt, out, outAt) {
    const d = f(signedAbsMax(x, xAt) / -16);
    const id = d !== 0 ? f(1 / d) : 0;
    writeHalf(out, outAt, d);
    let qh = 0;
    for (let j = 0; j < QK / 2; j++) {
      const xi0 = Math.min(31, f(f(x[xAt + j]! * id) + 16.5) | 0);
      const xi1 = Math.min(31, f(f(x[xAt + QK / 2 + j]! * id) + 16.5) | 0);
      out[outAt + 6 + j] = (xi0 & 0x0f) | ((xi1 & 0x0f) << 4);
      qh |= ((xi0 & 0x10) >>> 4) << j;
      qh |= ((xi1 & 0x10) >>> 4) << (j + QK / 2);
    }
    writeHighBits(out, outAt + 2, qh);
  },
  dequantize(bytes, at, y, yAt) {
    const d = readHalf(bytes, at);
    const qh = readHighBits(bytes, at + 2);
    for (let j = 0; j < QK / 2; j++) {
      const q = bytes[at + 6 + j]!;
      const x0 = ((q & 0x0f) | (((qh >>> j) << 4) & 0x10)) - 16;
      const x1 = ((q >>> 4) | ((qh >>> (j + 12)) & 0x10)) - 16;
      y[yAt + j] = f(x0 * d);
      y[yAt + j + QK / 2] = f(x1 * d);
    }
  },
};

export const q5_1: GgmlBlockCodec = {
  blockBytes: 24,
  quantize(x, xAt, out, outAt) {
    blockMinMax(x, xAt, minMax);
    const min = minMax[0]!;
    const d = f(f(minMax[1]! - min) / 31);
    const id = d !== 0 ? f(1 / d) : 0;
    writeHalf(out, outAt, d);
    writeHalf(out, outAt + 2, min);
    let qh = 0;
    for (let j = 0; j < QK / 2; j++) {
      // (uint8_t)(x0 + 0.5f): no MIN here, as in ggml
      const xi0 = (f(f(f(x[xAt + j]! - min) * id) + 0.5) | 0) & 0xff;
      const xi1 = (f(f(f(x[xAt + QK / 2 + j]! - min) * id) + 0.5) | 0) & 0xff;
      out[outAt + 8 + j] = (xi0 & 0x0f) | ((xi1 & 0x0f) << 4);
      qh |= ((xi0 & 0x10) >>> 4) << j;
      qh |= ((xi1 & 0x10) >>> 4) << (j + QK / 2);
    }
    writeHighBits(out, outAt + 4, qh);
  },
  dequantize(bytes, at, y, yAt) {
    const d = readHalf(bytes, at);
    const m = readHalf(bytes, at + 2);
    const qh = readHighBits(bytes, at + 4);
    for (let j = 0; j < QK / 2; j++) {
      const q = bytes[at + 8 + j]!;
      const x0 = (q & 0x0f) | (((qh >>> j) << 4) & 0x10);
      const x1 = (q >>> 4) | ((qh >>> (j + 12)) & 0x10);
      y[yAt + j] = f(x0 * d + m);
      y[yAt + j + QK / 2] = f(x1 * d + m);
    }
  },
};
