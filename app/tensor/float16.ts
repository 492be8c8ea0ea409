/**
 * IEEE binary16 emulation for torch's half-precision arithmetic.
 *
 * torch rounds the result of every elementwise op to the tensor dtype. A product or sum of two
 * half values is exact in a double, so rounding that double once to binary16 reproduces torch.
 */

const ROUND_MAGIC = 6755399441055744; // 2^52 + 2^51: (x + M) - M rounds a double to an integer, ties to even
const MAX_HALF = 65504;
const OVERFLOW_THRESHOLD = MAX_HALF + 16; // plus half an ulp (16): values at or above round to infinity

/** Rounds a double to the nearest binary16 value (ties to even), returned as a number. */
export function roundToFloat16(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  if (a >= OVERFLOW_THRESHOLD) return x > 0 ? Infinity : -Infinity;
  let e = Math.floor(Math.log2(a));
  // log2 may be off by one next to powers of two; fix the exponent exactly.
  if (2 ** e > a) e -= 1;
  else if (2 ** (e + 1) <= a) e += 1;
  const ulpExponent = Math.max(e, -14) - 10; // subnormals share the ulp 2^-24
  const ulp = 2 ** ulpExponent;
  const r = ((a / ulp + ROUND_MAGIC) - ROUND_MAGIC) * ulp;
  return x < 0 ? -r : r; // a < OVERFLOW_THRESHOLD, so r <= MAX_HALF
}

/** Converts binary16 bit patterns to their values. */
export function float16BitsToFloat32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = float16BitsToNumber(bits[i]!);
  return out;
}

export function float16BitsToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Converts values to binary16 bit patterns (rounding to nearest even). */
export function float32ToFloat16Bits(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = numberToFloat16Bits(values[i]!);
  return out;
}

export function numberToFloat16Bits(value: number): number {
  if (Number.isNaN(value)) return 0x7e00;
  const x = roundToFloat16(value);
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a === Infinity) return sign | 0x7c00;
  if (a === 0) return sign;
  if (a < 2 ** -14) return sign | Math.round(a / 2 ** -24); // subnormal: exact multiple of 2^-24
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1;
  else if (2 ** (e + 1) <= a) e += 1;
  const mantissa = Math.round((a / 2 ** e - 1) * 1024);
  return sign | ((e + 15) << 10) | mantissa;
}
