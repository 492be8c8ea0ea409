/**
 * HQQ's proximal shrinkage `shrink_lp_op(x, beta=10, lp_norm=0.7)` (spec §3.2 step 3.3), float32:
 *
 *   out = |x|;  out = max(out - (1/beta) * out^(lp_norm - 1), 0);  out *= sign(x)
 *
 * upstream (hqq 0.2.8.post1, `hqq/core/optimize.py`): `out.sub_((1.0 / beta) * out.pow(lp_norm - 1)).clamp_min_(0.0)`,
 * with no epsilon, so |x| = 0 gives 0 - inf -> 0. torch casts both Python scalars to the tensor's
 * float32: the weight is fround(0.1) and the exponent fround(-0.3) (with the float32 exponent 33 of the 36
 * golden per-step error trajectories are bit-exact; with the double −0.3 only 25).
 *
 * `pow` here is kvscope's own float32 power, not Math.pow: the same table-driven double-precision
 * algorithm runs in the JavaScript path and in the WebAssembly kernel, so both give identical bits.
 * It is correctly rounded except in rare ties of its ~1e-16 error. torch's power (SLEEF's AVX2
 * `powf` u10) is not: it is one ulp off on about 2% of the residuals, which is what keeps 3 of the 36
 * golden trajectories from being bit-exact (test-support/sleef-powf.ts emulates it; with it the
 * JavaScript engine reproduces all 36, sleef-reference.test.ts). Emulating it in the SIMD kernel
 * would need ~28 exactly rounded fused multiply-adds per power, which WebAssembly SIMD lacks.
 */
const fround = Math.fround;

/** float32(1 / beta) with beta = 10 (constant since hqq 0.2.7, spec §3.3). */
export const SHRINK_WEIGHT = fround(0.1);
/** float32(lp_norm - 1) with lp_norm = 0.7. */
export const SHRINK_EXPONENT = fround(0.7 - 1);
/**
 * Below this |x| the shrinkage is exactly 0: |x| - 0.1·|x|^-0.3 <= 0 iff |x| <= 0.1^(1/1.3) ≈ 0.170125.
 * At 0.17 the subtracted term is 0.17015, so float32 rounding (relative 1e-7) cannot make the
 * difference positive; above it the full formula is evaluated (shrink.test.ts checks the boundary).
 */
export const SHRINK_ZERO_BELOW = fround(0.17);

/** Mantissa table resolution: 2^10 intervals of [1, 2). */
export const POW_TABLE_BITS = 10;
const MANTISSA_BITS = 23;
const LOW_BITS = MANTISSA_BITS - POW_TABLE_BITS;
const LOW_SCALE = 2 ** -MANTISSA_BITS;

/**
 * Tables of the power. `mantissa` interleaves, for j = 0..1023 and m_j = 1 + j/1024,
 * `[2j] = m_j^e` and `[2j + 1] = 2^-23 / m_j` (so r = d · [2j + 1] for the 13 low mantissa bits d);
 * `exponent[b] = 2^(e·(b − 127))` for every float32 biased exponent b.
 */
export interface PowTables {
  readonly mantissa: Float64Array;
  readonly exponent: Float64Array;
  /** Taylor coefficients of (1 + r)^e, r < 2^-10: C1..C4 (truncation error < 1e-16) */
  readonly coefficients: readonly [number, number, number, number];
}

function buildTables(e: number): PowTables {
  const size = 1 << POW_TABLE_BITS;
  const mantissa = new Float64Array(2 * size);
  for (let j = 0; j < size; j++) {
    const m = 1 + j / size;
    mantissa[2 * j] = Math.pow(m, e);
    mantissa[2 * j + 1] = LOW_SCALE / m;
  }
  const exponent = new Float64Array(256);
  for (let b = 0; b < 256; b++) exponent[b] = Math.pow(2, e * (b - 127));
  const c1 = e;
  const c2 = (c1 * (e - 1)) / 2;
  const c3 = (c2 * (e - 2)) / 3;
  const c4 = (c3 * (e - 3)) / 4;
  return { mantissa, exponent, coefficients: [c1, c2, c3, c4] };
}

export const POW_TABLES: PowTables = buildTables(SHRINK_EXPONENT);

const { mantissa: MANTISSA, exponent: EXPONENT } = POW_TABLES;
const [C1, C2, C3, C4] = POW_TABLES.coefficients;
const bitsView = new Float32Array(1);
const bitsOf = new Uint32Array(bitsView.buffer);

/**
 * float32(x^SHRINK_EXPONENT) for a positive normal float32 x. For zero or subnormal x the result is
 * finite but meaningless; callers only use it above SHRINK_ZERO_BELOW.
 *
 * x = 2^(b−127) · m, m = m_j + d·2^-23 with m_j = 1 + j/1024; x^e = 2^(e(b−127)) · m_j^e · (1 + r)^e,
 * r = d·2^-23 / m_j. The WebAssembly kernel performs the same double operations in the same order.
 */
export function shrinkPow(x: number): number {
  bitsView[0] = x;
  const bits = bitsOf[0]!;
  const j = (bits >>> LOW_BITS) & ((1 << POW_TABLE_BITS) - 1);
  const r = (bits & ((1 << LOW_BITS) - 1)) * MANTISSA[2 * j + 1]!;
  // Estrin's scheme: shorter dependency chains for the SIMD kernel, the same operations here.
  const r2 = r * r;
  const series = (1 + C1 * r) + r2 * ((C2 + C3 * r) + r2 * C4);
  return fround((MANTISSA[2 * j]! * EXPONENT[bits >>> MANTISSA_BITS]!) * series);
}

/** float32(x^SHRINK_EXPONENT) for x >= SHRINK_ZERO_BELOW */
export type ShrinkPower = (x: number) => number;

/**
 * The shrunk residual `shrink_lp_op(x)` for a float32 residual x, in float32 (0 below the threshold).
 * `power` is kvscope's `shrinkPow` unless a test supplies another one (test-support/sleef-powf.ts).
 */
export function shrink(x: number, power: ShrinkPower = shrinkPow): number {
  const magnitude = Math.abs(x);
  if (magnitude < SHRINK_ZERO_BELOW) return 0;
  const out = fround(magnitude - fround(SHRINK_WEIGHT * power(magnitude)));
  if (!(out > 0)) return 0;
  return x < 0 ? -out : out;
}
