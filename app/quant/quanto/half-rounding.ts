/**
 * Fast rounding to IEEE binary16 for the float16 path (spec §3.4: torch computes half tensors one op
 * at a time, rounding each result to half).
 *
 * Equivalent to `roundToFloat16` (app/tensor/float16.ts) for every value it is used on, the double
 * result of one +, −, × or ÷ of two half values: rounding such a result first to float32 and then to
 * half gives the correctly rounded half, because double rounding is innocuous when the intermediate
 * precision p' satisfies p' ≥ 2p + 2 (53 ≥ 2·24 + 2, then 24 ≥ 2·11 + 2). The float32 → half step is
 * integer arithmetic on the bit pattern. half-rounding.test.ts checks the equivalence.
 */
const float32 = new Float32Array(1);
const bits32 = new Uint32Array(float32.buffer);

const HALF_MIN_NORMAL_EXPONENT = 127 - 14; // biased float32 exponent of 2^-14
const HALF_OVERFLOW_EXPONENT = 127 + 16; // 2^16 and above is always infinite in half
const HALF_MAX_BITS = 0x477fe000; // 65504 as float32 bits

export function roundToHalf(value: number): number {
  float32[0] = value;
  const bits = bits32[0]!;
  const exponent = (bits >>> 23) & 0xff;
  if (exponent >= HALF_MIN_NORMAL_EXPONENT) {
    if (exponent === 0xff) return value; // NaN or ±Inf
    if (exponent >= HALF_OVERFLOW_EXPONENT) return value > 0 ? Infinity : -Infinity;
    // round the 23-bit mantissa to 10 bits, ties to even; a carry moves into the exponent as it should
    const rounded = (bits + 0xfff + ((bits >>> 13) & 1)) & 0xffffe000;
    if ((rounded & 0x7fffffff) > HALF_MAX_BITS) return value > 0 ? Infinity : -Infinity;
    bits32[0] = rounded;
    return float32[0]!;
  }
  // half subnormals are multiples of 2^-24, the float32 ulp of 0.5: (|x| + 0.5) − 0.5 rounds to one
  const magnitude = Math.fround(Math.fround(Math.abs(float32[0]!) + 0.5) - 0.5);
  return bits >>> 31 ? -magnitude : magnitude;
}
