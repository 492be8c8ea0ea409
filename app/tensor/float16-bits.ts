import { float16BitsToNumber } from './float16.js';

/**
 * Fast binary16 ↔ float32 conversion for the feeds boundary of fp16-KV graphs (model_fp16.onnx).
 * float16.ts is the reference (exact, but a log2 per element); these are its table and
 * bit-twiddling twins for hot paths, tested equal to it (round to nearest, ties to even).
 */

let halfTable: Float32Array | null = null;

/** 65,536 entries, 256 KiB, built on first use. */
function table(): Float32Array {
  if (halfTable === null) {
    halfTable = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) halfTable[h] = float16BitsToNumber(h);
  }
  return halfTable;
}

/** Writes the values of `count` binary16 patterns from `bits[from…]` into `out[to…]`. */
export function halfBitsToFloat32Into(bits: Uint16Array, from: number, out: Float32Array, to: number, count: number): void {
  const t = table();
  for (let i = 0; i < count; i++) out[to + i] = t[bits[from + i]!]!;
}

/**
 * Writes the binary16 patterns of `count` float32 values from `values[from…]` into `out[to…]`,
 * rounding to nearest even; overflow gives ±Infinity, NaN gives 0x7e00 (as app/tensor/float16.ts).
 */
export function float32ToHalfBitsInto(values: Float32Array, from: number, out: Uint16Array, to: number, count: number): void {
  const words = new Uint32Array(values.buffer, values.byteOffset, values.length);
  for (let i = 0; i < count; i++) out[to + i] = halfBitsOfWord(words[from + i]!);
}

export function halfBitsOfWord(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  const mantissa = x & 0x7fffff;
  if (exponent === 0xff) return mantissa !== 0 ? 0x7e00 : sign | 0x7c00;
  const e = exponent - 112; // rebias 127 → 15
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal half: m·2^-24 with m = (1.mantissa)·2^(e-14), rounded to nearest even.
    if (e < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - e;
    let m = full >>> shift;
    const rest = full & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (m & 1) === 1)) m++;
    return sign | m;
  }
  let h = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa bumps the exponent, and past 30 it becomes infinity, as it should.
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1) === 1)) h++;
  return sign | h;
}
