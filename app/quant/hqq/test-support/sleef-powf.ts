/**
 * torch's float32 `pow(tensor, scalar)` on x86 CPU, emulated operation by operation: SLEEF's
 * `Sleef_powf8_u10` as built for AVX2 (FMA), i.e. sleefsimdsp.c `xpowf` = expkf(logkf(|x|) · y) with
 * df.h's double-float arithmetic in its ENABLE_FMA_SP form (torch 1.13's `Vectorized<float>::pow`; its
 * AVX512 kernels are opt-in). Every float32 operation is rounded like the hardware's, including the
 * single rounding of each fused multiply-add (`fmaf` below).
 *
 * Test-only and scalar (about 100× slower than shrink.ts `shrinkPow`): it shows what separates
 * kvscope from the golden vectors. SLEEF's result differs from the correctly rounded power by one ulp
 * for about 2% of the residuals HQQ raises to −0.3, which is all that separates the correctly rounded
 * power's 33/36 bit-exact golden error trajectories from 36/36 (sleef-reference.test.ts). WebAssembly
 * SIMD has no deterministic fused multiply-add, and the ~28 fused operations per power would each
 * cost several f64x2 instructions, so the SIMD kernels keep the correctly rounded power.
 *
 * Covers what HQQ needs: x > 0 finite (normal), y finite and not an integer; no special cases.
 */
const f = Math.fround;
const doubleView = new Float64Array(1);
const words = new Uint32Array(doubleView.buffer);
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;

/**
 * float32 fma(a, b, c) with one rounding: a·b is exact in a double; the double sum is made
 * round-to-odd (TwoSum error as sticky bit), after which rounding to float32 is correct (53 ≥ 24 + 2).
 */
export function fmaf(a: number, b: number, c: number): number {
  const p = a * b;
  const s = p + c;
  if (!Number.isFinite(s)) return f(s);
  const bb = s - p;
  const err = (p - (s - bb)) + (c - bb);
  if (err === 0) return f(s);
  doubleView[0] = s;
  const low = words[LOW]!;
  if ((low & 1) === 0) {
    // even and inexact: step one ulp towards the exact sum (odd neighbour)
    if ((err > 0) === (s > 0)) {
      words[LOW] = low + 1;
    } else {
      if (low === 0) words[1 - LOW] = words[1 - LOW]! - 1;
      words[LOW] = (low - 1) >>> 0;
    }
  }
  return f(doubleView[0]!);
}

type DoubleFloat = readonly [hi: number, lo: number];
const add = (a: number, b: number): number => f(a + b);
const sub = (a: number, b: number): number => f(a - b);
const mul = (a: number, b: number): number => f(a * b);
/** x·y − z and −x·y + z, fused */
const fmapn = (x: number, y: number, z: number): number => fmaf(x, y, -z);
const fmanp = (x: number, y: number, z: number): number => fmaf(-x, y, z);

// df.h (ENABLE_FMA_SP)
function dfadd2FF(x: number, y: number): DoubleFloat {
  const s = add(x, y);
  const v = sub(s, x);
  return [s, add(sub(x, sub(s, v)), sub(y, v))];
}
function dfadd2(x: DoubleFloat, y: DoubleFloat): DoubleFloat {
  const s = add(x[0], y[0]);
  const v = sub(s, x[0]);
  return [s, add(add(sub(x[0], sub(s, v)), sub(y[0], v)), add(x[1], y[1]))];
}
function dfadd(x: DoubleFloat, y: DoubleFloat): DoubleFloat {
  const s = add(x[0], y[0]);
  return [s, add(add(add(sub(x[0], s), y[0]), x[1]), y[1])];
}
function dfadd2DF(x: DoubleFloat, y: number): DoubleFloat {
  const s = add(x[0], y);
  const v = sub(s, x[0]);
  return [s, add(add(sub(x[0], sub(s, v)), sub(y, v)), x[1])];
}
function dfaddFD(x: number, y: DoubleFloat): DoubleFloat {
  const s = add(x, y[0]);
  return [s, add(add(sub(x, s), y[0]), y[1])];
}
function dfnormalize(t: DoubleFloat): DoubleFloat {
  const s = add(t[0], t[1]);
  return [s, add(sub(t[0], s), t[1])];
}
function dfscale(d: DoubleFloat, s: number): DoubleFloat {
  return [mul(d[0], s), mul(d[1], s)];
}
function dfdiv(n: DoubleFloat, d: DoubleFloat): DoubleFloat {
  const t = f(1 / d[0]);
  const s = mul(n[0], t);
  const u = fmapn(t, n[0], s);
  const v = fmanp(d[1], t, fmanp(d[0], t, 1));
  return [s, fmaf(s, v, fmaf(n[1], t, u))];
}
function dfsqu(x: DoubleFloat): DoubleFloat {
  const s = mul(x[0], x[0]);
  return [s, fmaf(add(x[0], x[0]), x[1], fmapn(x[0], x[0], s))];
}
function dfmul(x: DoubleFloat, y: DoubleFloat): DoubleFloat {
  const s = mul(x[0], y[0]);
  return [s, fmaf(x[0], y[1], fmaf(x[1], y[0], fmapn(x[0], y[0], s)))];
}
function dfmulDF(x: DoubleFloat, y: number): DoubleFloat {
  const s = mul(x[0], y);
  return [s, fmaf(x[1], y, fmapn(x[0], y, s))];
}

const floatView = new Float32Array(1);
const floatBits = new Int32Array(floatView.buffer);

/** sleefsimdsp.c logkf for a normal d > 0 (the non-AVX512 branch) */
function logkf(d: number): DoubleFloat {
  floatView[0] = mul(d, f(1 / 0.75));
  const e = ((floatBits[0]! >> 23) & 0xff) - 0x7f; // vilogb2k
  floatView[0] = d;
  floatBits[0] = floatBits[0]! + ((-e) << 23); // vldexp3: m = d · 2^-e, m in [0.75, 1.5)
  const m = floatView[0]!;
  const x = dfdiv(dfadd2FF(-1, m), dfadd2FF(1, m));
  const x2 = dfsqu(x);
  let t = f(0.2403203547000885); // 0.240320354700088500976562f
  t = fmaf(t, x2[0], f(0.285112679004669189453125));
  t = fmaf(t, x2[0], f(0.4000079929828644)); // 0.400007992982864379882812f
  const c: DoubleFloat = [f(0.66666662693023681640625), f(3.69183861259614332084311e-09)];
  let s = dfmulDF([f(0.69314718246459960938), f(-1.904654323148236017e-09)], f(e));
  s = dfadd(s, dfscale(x, 2));
  return dfadd(s, dfmul(dfmul(x2, x), dfadd2(dfmulDF(x2, t), c)));
}

/** round half to even, as _mm256_cvtps_epi32 */
function rint(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** sleefsimdsp.c expkf */
function expkf(d: DoubleFloat): number {
  let u = mul(add(d[0], d[1]), f(1.4426950408889634) /* R_LN2f */);
  const q = rint(u);
  let s = dfadd2DF(d, mul(q, f(-0.693145751953125)));
  s = dfadd2DF(s, mul(q, f(-1.428606765330187045e-06)));
  s = dfnormalize(s);
  u = f(0.00136324646882712841033936);
  u = fmaf(u, s[0], f(0.00836596917361021041870117));
  u = fmaf(u, s[0], f(0.0416710823774337768554688));
  u = fmaf(u, s[0], f(0.166665524244308471679688));
  u = fmaf(u, s[0], f(0.499999850988388061523438));
  const t = dfaddFD(1, dfadd(s, dfmulDF(dfsqu(s), u)));
  if (d[0] < -104) return 0;
  return f(add(t[0], t[1]) * 2 ** q); // vldexp: exact for the exponents reached here
}

/** SLEEF's float32 x^y for x > 0 and a non-integer y (both float32 values). */
export function sleefPowf(x: number, y: number): number {
  return expkf(dfmulDF(logkf(x), y));
}
