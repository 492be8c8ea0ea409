import { float16BitsToNumber } from '../../tensor/float16.js';
import { halfBitsOfWord } from '../../tensor/float16-bits.js';

/**
 * ggml's fp16 scales. ggml/src/ggml-impl.h `ggml_compute_fp32_to_fp16` (GGML_FP32_TO_FP16) rounds a
 * float32 to binary16 to nearest even, overflow to ±inf, and writes NaN as sign | 0x7E00;
 * `halfBitsOfWord` is that rounding, so only the NaN's sign is added here. GGML_FP16_TO_FP32 is exact.
 */
const word = new Float32Array(1);
const wordBits = new Uint32Array(word.buffer);

export function ggmlHalfBits(value: number): number {
  word[0] = value;
  const bits = wordBits[0]!;
  if ((bits & 0x7fffffff) > 0x7f800000) return ((bits >>> 16) & 0x8000) | 0x7e00;
  return halfBitsOfWord(bits);
}

export function ggmlHalfValue(bits: number): number {
  return float16BitsToNumber(bits);
}

/** Reads the little-endian fp16 at `offset` of `bytes` as its value. */
export function readHalf(bytes: Uint8Array, offset: number): number {
  return float16BitsToNumber(bytes[offset]! | (bytes[offset + 1]! << 8));
}

/** Writes `value` rounded as ggml rounds it, little-endian, at `offset`. */
export function writeHalf(bytes: Uint8Array, offset: number, value: number): void {
  const h = ggmlHalfBits(value);
  bytes[offset] = h & 0xff;
  bytes[offset + 1] = h >>> 8;
}
