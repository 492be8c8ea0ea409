/**
 * IEEE binary16 emulation for torch's half-precision arithmetic.
 *
 * torch rounds the result of every elementwise op to the tensor dtype. A product or sum of two
 * half values is exact in a double, so rounding that double once to binary16 reproduces torch.
 */

const float32 = new Float32Array(1);
const bits32 = new Uint32Array(float32.buffer);
const HALF_MIN_NORMAL_EXPONENT = 127 - 14; // biased float32 exponent of 2^-14
const HALF_OVERFLOW_EXPONENT = 127 + 16; // 2^16 and above is always infinite in half
const HALF_MAX_BITS = 0x477fe000; // 65504 as float32 bits
const ROUND_MAGIC = 6755399441055744; // 2^52 + 2^51: (x + M) - M rounds a double to an integer, ties to even
const TWO_24 = 16777216;
const TWO_MINUS_24 = 5.9604644775390625e-8;

/**
 * Rounds any double to the nearest binary16 value (ties to even), returned as a number; ±0, ±Inf and
 * NaN pass through, |x| ≥ 65520 gives ±Inf.
 *
 * Fast path on the float32 bit pattern: the double is first rounded to float32, then its 23-bit
 * mantissa to 10 bits with integer arithmetic. Every half value and every midpoint between two is a
 * float32, so the first rounding never moves x across a midpoint; it can only land exactly on one (x
 * within a float32 ulp of a tie). That spurious tie is then broken towards x. Below 2^-14 (half
 * subnormals, multiples of 2^-24) the double is rounded directly. float16.test.ts checks it against an
 * independent rounding on float32 sweeps, op results and doubles next to every kind of tie.
 */
export function roundToFloat16(x: number): number {
  float32[0] = x;
  const bits = bits32[0]!;
  const exponent = (bits >>> 23) & 0xff;
  if (exponent >= HALF_MIN_NORMAL_EXPONENT) {
    if (exponent === 0xff) return float32[0]!; // NaN, ±Inf, or a double beyond float32: ±Inf
    if (exponent >= HALF_OVERFLOW_EXPONENT) return bits >>> 31 ? -Infinity : Infinity;
    let rounded: number;
    if ((bits & 0x1fff) !== 0x1000 || float32[0] === x) {
      // ties to even; a carry moves into the exponent as it should
      rounded = (bits + 0xfff + ((bits >>> 13) & 1)) & 0xffffe000;
    } else {
      rounded = (bits & 0xffffe000) + (Math.abs(x) > Math.abs(float32[0]!) ? 0x2000 : 0);
    }
    if ((rounded & 0x7fffffff) > HALF_MAX_BITS) return bits >>> 31 ? -Infinity : Infinity;
    bits32[0] = rounded;
    return float32[0]!;
  }
  const magnitude = (Math.abs(x) * TWO_24 + ROUND_MAGIC - ROUND_MAGIC) * TWO_MINUS_24;
  return bits >>> 31 ? -magnitude : magnitude;
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
