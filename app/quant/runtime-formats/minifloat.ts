/**
 * Small IEEE-style floats as NVIDIA's conversions produce them: FP8 e4m3 (OCP "e4m3fn": bias 7, no
 * infinities, S.1111.111 the only NaN, max 448), FP8 e5m2 (bias 15, IEEE infinities and NaNs,
 * max 57344) and FP4 e2m1 (bias 1, no inf/NaN, max 6). Encoding is `cvt.rn.satfinite`
 * (`__nv_cvt_float_to_fp8(x, __NV_SATFINITE, …)`, `cvt.rn.satfinite.e2m1x2.f32`): round to nearest,
 * ties to even; anything at or beyond the largest finite value, infinities included, saturates to it;
 * NaN gives the format's NaN (0x7F for both FP8 formats; e2m1 has none and NVIDIA gives +6 — never fed here).
 */
export interface MinifloatFormat {
  readonly name: string;
  readonly exponentBits: number;
  readonly mantissaBits: number;
  readonly bias: number;
  /** the largest finite positive code */
  readonly maxCode: number;
  /** the NaN code written for a NaN input (sign bit clear), or null where the format has none */
  readonly nanCode: number | null;
  /** code → value, for every code of the format (2^(1 + e + m) entries) */
  readonly values: Float64Array;
}

function decodeTable(exponentBits: number, mantissaBits: number, bias: number, special: (code: number) => number | null): Float64Array {
  const width = 1 + exponentBits + mantissaBits;
  const table = new Float64Array(1 << width);
  for (let code = 0; code < table.length; code++) {
    const sign = (code >> (width - 1)) & 1 ? -1 : 1;
    const exponent = (code >> mantissaBits) & ((1 << exponentBits) - 1);
    const mantissa = code & ((1 << mantissaBits) - 1);
    const fixed = special(code & ((1 << (width - 1)) - 1));
    if (fixed !== null) table[code] = Number.isNaN(fixed) ? NaN : sign * fixed;
    else if (exponent === 0) table[code] = sign * mantissa * 2 ** (1 - bias - mantissaBits);
    else table[code] = sign * (1 + mantissa / (1 << mantissaBits)) * 2 ** (exponent - bias);
  }
  return table;
}

export const E4M3: MinifloatFormat = {
  name: 'e4m3', exponentBits: 4, mantissaBits: 3, bias: 7, maxCode: 0x7e, nanCode: 0x7f,
  values: decodeTable(4, 3, 7, (magnitude) => (magnitude === 0x7f ? NaN : null)),
};

export const E5M2: MinifloatFormat = {
  name: 'e5m2', exponentBits: 5, mantissaBits: 2, bias: 15, maxCode: 0x7b, nanCode: 0x7f,
  values: decodeTable(5, 2, 15, (magnitude) => (magnitude === 0x7c ? Infinity : magnitude > 0x7c ? NaN : null)),
};

export const E2M1: MinifloatFormat = {
  name: 'e2m1', exponentBits: 2, mantissaBits: 1, bias: 1, maxCode: 0x7, nanCode: null,
  values: decodeTable(2, 1, 1, () => null),
};

const doubleView = new Float64Array(1);
const doubleHigh = new Uint32Array(doubleView.buffer, 4, 1);
/** 2^k for k in [−64, 64], so the hot path multiplies instead of calling Math.pow. */
const POW2 = Float64Array.from({ length: 129 }, (_, i) => 2 ** (i - 64));

/**
 * Rounds `x` (any double; callers pass float32 values) to the format's code, as cvt.rn.satfinite does.
 * Exact: the scaled magnitude is an exact double, rounded once to an integer, ties to even.
 */
export function encodeMinifloat(format: MinifloatFormat, x: number): number {
  const width = 1 + format.exponentBits + format.mantissaBits;
  const signBit = 1 << (width - 1);
  if (x !== x) return format.nanCode ?? format.maxCode; // NaN
  const sign = x < 0 || (x === 0 && 1 / x < 0) ? signBit : 0;
  const a = x < 0 ? -x : x;
  if (a >= format.values[format.maxCode]!) return sign | format.maxCode;
  const m = format.mantissaBits;
  const minNormalExponent = 1 - format.bias;
  // The exponent of a's leading bit (from the double's exponent field), clamped to the subnormal
  // range, where the step is 2^(minNormalExponent − m).
  doubleView[0] = a;
  let e = ((doubleHigh[0]! >>> 20) & 0x7ff) - 1023;
  if (e < minNormalExponent) e = minNormalExponent;
  const scaled = a * POW2[64 + m - e]!; // exact: a power-of-two scaling
  const floor = Math.floor(scaled);
  const rest = scaled - floor;
  const units = rest > 0.5 || (rest === 0.5 && (floor & 1) === 1) ? floor + 1 : floor;
  // units counts steps of 2^(e − m) from 0: the code is (biased exponent − 1)·2^m + units for normals
  // (units ≥ 2^m carries into the exponent as it should), and units alone for subnormals.
  const code = (e - minNormalExponent) * (1 << m) + units;
  return sign | (code < format.maxCode ? code : format.maxCode);
}
