/**
 * The HQQ WebAssembly kernels, in AssemblyScript (built by app/wasm/kernels/build.mjs into app/wasm/built/hqq.ts;
 * driven by app/quant/hqq/optimize-wasm.ts and dequantize-wasm.ts through app/quant/hqq/kernels.ts):
 *
 * - the optimizer step (one `optimize_weights_proximal_legacy_step`, spec §3.2 step 3): the per-element
 *   work, exactly the float32 operations of optimize-js.ts and the float64 operations of shrink.ts
 *   `shrinkPow` in the same order, so both engines produce identical bits; and torch's float32 sums
 *   (torch-sum.ts) of c per group and of a = |W − W_r| over the tensor, per torch thread chunk;
 * - the kernels around it: group ranges (step 2), final codes and bit packing (step 4, bitpack.ts),
 *   float32 dequantization (step 5, dequantize.ts).
 *
 * Every step kernel works on a range of the tensor with its own scratch (`state`) and writes its chunk
 * sums of a at `pErrorOut`, so one call can cover the whole tensor, or two threads can each take one
 * torch chunk: the same operations either way, so the same bits. The module imports its memory (a
 * shared one in the threaded build); the tables below are written there by kernel-module.ts.
 */

// Memory map (app/quant/hqq/kernel-layout.ts; exported so a test can hold the two together)
/** 1024 × (m_j^e, 2^-23/m_j) float64 pairs: shrink.ts `POW_TABLES.mantissa` */
export const TABLE_MANTISSA: u32 = 0;
/** 256 float64: shrink.ts `POW_TABLES.exponent` */
export const TABLE_EXPONENT: u32 = 16384;
/** the 4 float64 Taylor coefficients C1..C4 of (1 + r)^e: shrink.ts `POW_TABLES.coefficients` */
export const TABLE_COEFFICIENTS: u32 = 20448;
/** (mantissa[2j] · exponent[b], mantissa[2j + 1]) float64 pairs for the biased exponents b = 124..139 */
export const TABLE_COMBINED: u32 = 20480;
export const COMBINED_FIRST_EXPONENT: u32 = 124;
export const POW_TABLE_BITS: u32 = 10;
export const COMBINED_BITS: u32 = POW_TABLE_BITS + 4;
/** Offsets in a thread's scratch: the error cascade (4 levels × 8 slots), one group's slots, the power count. */
export const ERROR_LEVELS_AT: u32 = 0;
export const GROUP_SLOTS_AT: u32 = 512;
export const POWER_VECTORS_AT: u32 = 640;
/**
 * The vector constants of the element work, 16 bytes each, written by kernel-module.ts (from shrink.ts):
 * read from memory at each use, as a spilled local would be, where a v128.const in a loop is rebuilt at
 * every use.
 */
export const TABLE_VECTORS: u32 = 20320;
/** f32x4(SHRINK_ZERO_BELOW), f32x4(SHRINK_WEIGHT), i32x4(sign bit), i32x4(low 13 mantissa bits), i32x4(1023), i32x4(124 << 10), f64x2(1) */
export const VECTOR_SKIP: u32 = 0;
export const VECTOR_TENTH: u32 = 16;
export const VECTOR_SIGN: u32 = 32;
export const VECTOR_LOW_MASK: u32 = 48;
export const VECTOR_TABLE_MASK: u32 = 64;
export const VECTOR_FIRST: u32 = 80;
export const VECTOR_ONE: u32 = 96;

const LOW_BITS: u32 = 23 - POW_TABLE_BITS;
/**
 * torch's float32 summation order laid out for the kernels: one torch "row" is 32 elements, 4 AVX2
 * vectors × 8 lanes, i.e. 8 v128 slots (slot v holds elements 4v..4v+3). Slots are added row after row
 * (`multi_row_sum`, levels of 2^power rows), then combined: the 4 AVX2 accumulators in order
 * (`row_sum`), then the 8 lanes left to right (`vectorized_inner_sum`). One level is 8 slots = 128 bytes.
 */
const SLOTS: u32 = 8;
const LEVEL_BYTES: u32 = SLOTS * 16;

/** Vectors with a lane that needed the power in this call (per instance, so per thread). */
let powerVectors: i32 = 0;

// ---------------------------------------------------------------------------------------------
// torch's sums (torch-sum.ts)
// ---------------------------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function accumulate(addr: usize, value: v128, offset: usize = 0): void {
  v128.store(addr + offset, f32x4.add(v128.load(addr + offset), value));
}

// @ts-ignore: decorator
@inline function zeroLevels(at: usize, levels: u32): void {
  for (let i: u32 = 0; i < levels * SLOTS; i++) v128.store(at + i * 16, i32x4.splat(0));
}

/** level += level − 1; level − 1 = 0, for the 8 slots of the levels at `at` */
// @ts-ignore: decorator
@inline function pushLevel(at: usize, level: u32): void {
  const upper = at + level * LEVEL_BYTES;
  const lower = upper - LEVEL_BYTES;
  for (let s: u32 = 0; s < SLOTS * 16; s += 16) {
    accumulate(upper + s, v128.load(lower + s));
    v128.store(lower + s, i32x4.splat(0));
  }
}

/**
 * `multi_row_sum`'s push after `row` completed rows (a 1-based count): every 2^power rows level 0
 * moves into level 1, every 2^(2·power) rows level 1 into level 2, and so on.
 */
// @ts-ignore: decorator
@inline function cascadePush(at: usize, row: u32, mask: u32, power: u32): void {
  if ((row & mask) == 0) {
    pushLevel(at, 1);
    if ((row & (mask << power)) == 0) {
      pushLevel(at, 2);
      if ((row & (mask << (power * 2))) == 0) pushLevel(at, 3);
    }
  }
}

/** The float32 total of `levels` cascade levels at `at`: per slot ((L0 + L1) + L2) + L3, then the 8 slots combined. */
// @ts-ignore: decorator
@inline function combineLevels(at: usize, levels: u32): f32 {
  let low = slotTotal(at, 0, levels);
  let high = slotTotal(at, 1, levels);
  for (let s: u32 = 2; s < SLOTS; s += 2) {
    low = f32x4.add(low, slotTotal(at, s, levels));
    high = f32x4.add(high, slotTotal(at, s + 1, levels));
  }
  let sum: f32 = 0;
  sum += f32x4.extract_lane(low, 0);
  sum += f32x4.extract_lane(low, 1);
  sum += f32x4.extract_lane(low, 2);
  sum += f32x4.extract_lane(low, 3);
  sum += f32x4.extract_lane(high, 0);
  sum += f32x4.extract_lane(high, 1);
  sum += f32x4.extract_lane(high, 2);
  sum += f32x4.extract_lane(high, 3);
  return sum;
}

// @ts-ignore: decorator
@inline function slotTotal(at: usize, slot: u32, levels: u32): v128 {
  let total = v128.load(at + slot * 16);
  for (let level: u32 = 1; level < levels; level++) total = f32x4.add(total, v128.load(at + level * LEVEL_BYTES + slot * 16));
  return total;
}

// ---------------------------------------------------------------------------------------------
// The per-element work, four lanes at a time
// ---------------------------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function vector(offset: u32): v128 {
  return v128.load(TABLE_VECTORS + offset);
}

// @ts-ignore: decorator
@inline function nearestCode(ws: v128, z: v128, maxCode: v128): v128 {
  return f32x4.pmin(f32x4.pmax(f32x4.nearest(f32x4.add(ws, z)), i32x4.splat(0)), maxCode);
}

// @ts-ignore: decorator
@inline function errorOf(w: v128, q: v128, s: v128, z: v128): v128 {
  return f32x4.sub(w, f32x4.div(f32x4.sub(q, z), s));
}

// @ts-ignore: decorator
@inline function needsPower(a: v128): v128 {
  return f32x4.ge(a, vector(VECTOR_SKIP));
}

/** Entry index relative to the combined table; lanes that need no power use entry 0. */
// @ts-ignore: decorator
@inline function combinedIndex(a: v128, need: v128): v128 {
  return v128.and(i32x4.sub(i32x4.shr_u(a, LOW_BITS), vector(VECTOR_FIRST)), need);
}

/** In range iff no lane has bits at or above COMBINED_ENTRIES (exponents below wrap to huge values). */
// @ts-ignore: decorator
@inline function inCombinedRange(indices: v128): bool {
  return !v128.any_true(i32x4.shr_u(indices, COMBINED_BITS));
}

/** Estrin's scheme, as shrinkPow: (1 + c1·r) + r²·((c2 + c3·r) + r²·c4) */
// @ts-ignore: decorator
@inline function series(r: v128): v128 {
  const r2 = f64x2.mul(r, r);
  const c1 = v128.load64_splat(TABLE_COEFFICIENTS), c2 = v128.load64_splat(TABLE_COEFFICIENTS, 8);
  const c3 = v128.load64_splat(TABLE_COEFFICIENTS, 16), c4 = v128.load64_splat(TABLE_COEFFICIENTS, 24);
  return f64x2.add(f64x2.add(vector(VECTOR_ONE), f64x2.mul(c1, r)),
    f64x2.mul(r2, f64x2.add(f64x2.add(c2, f64x2.mul(c3, r)), f64x2.mul(r2, c4))));
}

/**
 * `shrinkPow` of the four lanes of a, two lanes per f64x2, through TABLE_COMBINED (every lane that
 * needs the power lies in its range): one entry per lane, which holds the product `shrinkPow` forms.
 * Table entries are fetched per lane (WebAssembly has no gather). `index` is combinedIndex's.
 */
// @ts-ignore: decorator
@inline function powCombined(a: v128, index: v128): v128 {
  const offsets = i32x4.shl(index, 4);
  const lowBits = v128.and(a, vector(VECTOR_LOW_MASK));
  let e0 = v128.load(<u32>i32x4.extract_lane(offsets, 0), TABLE_COMBINED);
  let e1 = v128.load(<u32>i32x4.extract_lane(offsets, 1), TABLE_COMBINED);
  let r = f64x2.mul(f64x2.convert_low_i32x4_s(lowBits), v128.shuffle<f64>(e0, e1, 1, 3));
  const p = f32x4.demote_f64x2_zero(f64x2.mul(v128.shuffle<f64>(e0, e1, 0, 2), series(r)));
  e0 = v128.load(<u32>i32x4.extract_lane(offsets, 2), TABLE_COMBINED);
  e1 = v128.load(<u32>i32x4.extract_lane(offsets, 3), TABLE_COMBINED);
  r = f64x2.mul(f64x2.convert_low_i32x4_s(v128.shuffle<i64>(lowBits, lowBits, 1, 3)), v128.shuffle<f64>(e0, e1, 1, 3));
  const p2 = f32x4.demote_f64x2_zero(f64x2.mul(v128.shuffle<f64>(e0, e1, 0, 2), series(r)));
  return v128.shuffle<i64>(p, p2, 0, 2);
}

/** powCombined through the mantissa and exponent tables: two lookups and a product per lane. */
// @ts-ignore: decorator
@inline function powSplit(a: v128): v128 {
  const offsets = i32x4.shl(v128.and(i32x4.shr_u(a, LOW_BITS), vector(VECTOR_TABLE_MASK)), 4);
  const exponents = i32x4.shl(i32x4.shr_u(a, 23), 3);
  const lowBits = v128.and(a, vector(VECTOR_LOW_MASK));
  let e0 = v128.load(<u32>i32x4.extract_lane(offsets, 0), TABLE_MANTISSA);
  let e1 = v128.load(<u32>i32x4.extract_lane(offsets, 1), TABLE_MANTISSA);
  let r = f64x2.mul(f64x2.convert_low_i32x4_s(lowBits), v128.shuffle<f64>(e0, e1, 1, 3));
  let scaled = f64x2.mul(v128.shuffle<f64>(e0, e1, 0, 2), v128.load64_lane(<u32>i32x4.extract_lane(exponents, 1),
    v128.load64_zero(<u32>i32x4.extract_lane(exponents, 0), TABLE_EXPONENT), 1, TABLE_EXPONENT));
  const p = f32x4.demote_f64x2_zero(f64x2.mul(scaled, series(r)));
  e0 = v128.load(<u32>i32x4.extract_lane(offsets, 2), TABLE_MANTISSA);
  e1 = v128.load(<u32>i32x4.extract_lane(offsets, 3), TABLE_MANTISSA);
  r = f64x2.mul(f64x2.convert_low_i32x4_s(v128.shuffle<i64>(lowBits, lowBits, 1, 3)), v128.shuffle<f64>(e0, e1, 1, 3));
  scaled = f64x2.mul(v128.shuffle<f64>(e0, e1, 0, 2), v128.load64_lane(<u32>i32x4.extract_lane(exponents, 3),
    v128.load64_zero(<u32>i32x4.extract_lane(exponents, 2), TABLE_EXPONENT), 1, TABLE_EXPONENT));
  const p2 = f32x4.demote_f64x2_zero(f64x2.mul(scaled, series(r)));
  return v128.shuffle<i64>(p, p2, 0, 2);
}

/**
 * c = W_q − (W − W_e)·s where the power ran: W_e is the shrunk error (0 in lanes below
 * SHRINK_ZERO_BELOW, where `need` is clear).
 */
// @ts-ignore: decorator
@inline function shrunkCode(q: v128, w: v128, s: v128, xe: v128, a: v128, p: v128, need: v128): v128 {
  const shrunk = v128.and(v128.or(v128.and(xe, vector(VECTOR_SIGN)),
    f32x4.pmax(f32x4.sub(a, f32x4.mul(p, vector(VECTOR_TENTH))), i32x4.splat(0))), need);
  return f32x4.sub(q, f32x4.mul(f32x4.sub(w, shrunk), s));
}

/**
 * One vector's element work: returns c = W_q − (W − W_e)·s and adds a = |W − W_r| at `pA` (where
 * `keepError`). Lanes below SHRINK_ZERO_BELOW get W_e = 0 (so c = W_q − W·s); the power runs only
 * when a lane needs it.
 */
// @ts-ignore: decorator
@inline function element(w: v128, s: v128, z: v128, maxCode: v128, pA: usize, keepError: bool): v128 {
  const ws = f32x4.mul(w, s);
  const q = nearestCode(ws, z, maxCode);
  const xe = errorOf(w, q, s, z);
  const a = f32x4.abs(xe);
  if (keepError) accumulate(pA, a);
  const need = needsPower(a);
  if (!v128.any_true(need)) return f32x4.sub(q, ws);
  const index = combinedIndex(a, need);
  const p = inCombinedRange(index) ? powCombined(a, index) : powSplit(a);
  powerVectors++;
  return shrunkCode(q, w, s, xe, a, p, need);
}

/**
 * The element work of one torch row (8 vectors from `pW`), the slots going through each stage together:
 * their dependency chains are long (a division, table fetches, the float64 series) and independent, and
 * side by side the CPU overlaps them. A lane's result is the same whichever slots it is computed with.
 * s and z come from `sv`/`zv` (`shared`) or per slot from `pS`/`pZ`. Each slot's c is added at `pC`, its a at `pA`.
 */
// @ts-ignore: decorator
@inline function row8(
  pW: usize, pS: usize, pZ: usize, sv: v128, zv: v128, shared: bool, pC: usize, pA: usize, maxCode: v128,
): void {
  const w0 = v128.load(pW, 0), w1 = v128.load(pW, 16), w2 = v128.load(pW, 32), w3 = v128.load(pW, 48);
  const w4 = v128.load(pW, 64), w5 = v128.load(pW, 80), w6 = v128.load(pW, 96), w7 = v128.load(pW, 112);
  const s0 = shared ? sv : v128.load(pS, 0), s1 = shared ? sv : v128.load(pS, 16);
  const s2 = shared ? sv : v128.load(pS, 32), s3 = shared ? sv : v128.load(pS, 48);
  const s4 = shared ? sv : v128.load(pS, 64), s5 = shared ? sv : v128.load(pS, 80);
  const s6 = shared ? sv : v128.load(pS, 96), s7 = shared ? sv : v128.load(pS, 112);
  const z0 = shared ? zv : v128.load(pZ, 0), z1 = shared ? zv : v128.load(pZ, 16);
  const z2 = shared ? zv : v128.load(pZ, 32), z3 = shared ? zv : v128.load(pZ, 48);
  const z4 = shared ? zv : v128.load(pZ, 64), z5 = shared ? zv : v128.load(pZ, 80);
  const z6 = shared ? zv : v128.load(pZ, 96), z7 = shared ? zv : v128.load(pZ, 112);
  const ws0 = f32x4.mul(w0, s0), ws1 = f32x4.mul(w1, s1), ws2 = f32x4.mul(w2, s2), ws3 = f32x4.mul(w3, s3);
  const ws4 = f32x4.mul(w4, s4), ws5 = f32x4.mul(w5, s5), ws6 = f32x4.mul(w6, s6), ws7 = f32x4.mul(w7, s7);
  const q0 = nearestCode(ws0, z0, maxCode), q1 = nearestCode(ws1, z1, maxCode);
  const q2 = nearestCode(ws2, z2, maxCode), q3 = nearestCode(ws3, z3, maxCode);
  const q4 = nearestCode(ws4, z4, maxCode), q5 = nearestCode(ws5, z5, maxCode);
  const q6 = nearestCode(ws6, z6, maxCode), q7 = nearestCode(ws7, z7, maxCode);
  const xe0 = errorOf(w0, q0, s0, z0), xe1 = errorOf(w1, q1, s1, z1), xe2 = errorOf(w2, q2, s2, z2), xe3 = errorOf(w3, q3, s3, z3);
  const xe4 = errorOf(w4, q4, s4, z4), xe5 = errorOf(w5, q5, s5, z5), xe6 = errorOf(w6, q6, s6, z6), xe7 = errorOf(w7, q7, s7, z7);
  const a0 = f32x4.abs(xe0), a1 = f32x4.abs(xe1), a2 = f32x4.abs(xe2), a3 = f32x4.abs(xe3);
  const a4 = f32x4.abs(xe4), a5 = f32x4.abs(xe5), a6 = f32x4.abs(xe6), a7 = f32x4.abs(xe7);
  const n0 = needsPower(a0), n1 = needsPower(a1), n2 = needsPower(a2), n3 = needsPower(a3);
  const n4 = needsPower(a4), n5 = needsPower(a5), n6 = needsPower(a6), n7 = needsPower(a7);
  let out0: v128, out1: v128, out2: v128, out3: v128, out4: v128, out5: v128, out6: v128, out7: v128;
  if (v128.any_true(v128.or(v128.or(v128.or(n0, n1), v128.or(n2, n3)), v128.or(v128.or(n4, n5), v128.or(n6, n7))))) {
    const i0 = combinedIndex(a0, n0), i1 = combinedIndex(a1, n1), i2 = combinedIndex(a2, n2), i3 = combinedIndex(a3, n3);
    const i4 = combinedIndex(a4, n4), i5 = combinedIndex(a5, n5), i6 = combinedIndex(a6, n6), i7 = combinedIndex(a7, n7);
    let p0: v128, p1: v128, p2: v128, p3: v128, p4: v128, p5: v128, p6: v128, p7: v128;
    if (inCombinedRange(v128.or(v128.or(v128.or(i0, i1), v128.or(i2, i3)), v128.or(v128.or(i4, i5), v128.or(i6, i7))))) {
      p0 = powCombined(a0, i0); p1 = powCombined(a1, i1); p2 = powCombined(a2, i2); p3 = powCombined(a3, i3);
      p4 = powCombined(a4, i4); p5 = powCombined(a5, i5); p6 = powCombined(a6, i6); p7 = powCombined(a7, i7);
    } else {
      p0 = powSplit(a0); p1 = powSplit(a1); p2 = powSplit(a2); p3 = powSplit(a3);
      p4 = powSplit(a4); p5 = powSplit(a5); p6 = powSplit(a6); p7 = powSplit(a7);
    }
    powerVectors += <i32>v128.any_true(n0) + <i32>v128.any_true(n1) + <i32>v128.any_true(n2) + <i32>v128.any_true(n3)
      + <i32>v128.any_true(n4) + <i32>v128.any_true(n5) + <i32>v128.any_true(n6) + <i32>v128.any_true(n7);
    out0 = shrunkCode(q0, w0, s0, xe0, a0, p0, n0); out1 = shrunkCode(q1, w1, s1, xe1, a1, p1, n1);
    out2 = shrunkCode(q2, w2, s2, xe2, a2, p2, n2); out3 = shrunkCode(q3, w3, s3, xe3, a3, p3, n3);
    out4 = shrunkCode(q4, w4, s4, xe4, a4, p4, n4); out5 = shrunkCode(q5, w5, s5, xe5, a5, p5, n5);
    out6 = shrunkCode(q6, w6, s6, xe6, a6, p6, n6); out7 = shrunkCode(q7, w7, s7, xe7, a7, p7, n7);
  } else {
    out0 = f32x4.sub(q0, ws0); out1 = f32x4.sub(q1, ws1); out2 = f32x4.sub(q2, ws2); out3 = f32x4.sub(q3, ws3);
    out4 = f32x4.sub(q4, ws4); out5 = f32x4.sub(q5, ws5); out6 = f32x4.sub(q6, ws6); out7 = f32x4.sub(q7, ws7);
  }
  accumulate(pC, out0, 0); accumulate(pA, a0, 0);
  accumulate(pC, out1, 16); accumulate(pA, a1, 16);
  accumulate(pC, out2, 32); accumulate(pA, a2, 32);
  accumulate(pC, out3, 48); accumulate(pA, a3, 48);
  accumulate(pC, out4, 64); accumulate(pA, a4, 64);
  accumulate(pC, out5, 80); accumulate(pA, a5, 80);
  accumulate(pC, out6, 96); accumulate(pA, a6, 96);
  accumulate(pC, out7, 112); accumulate(pA, a7, 112);
}

/** row8 one vector at a time (each slot's stages before the next slot's): fewer live vectors. */
// @ts-ignore: decorator
@inline function row8Sequential(pW: usize, pS: usize, pZ: usize, pC: usize, pA: usize, maxCode: v128): void {
  accumulate(pC, element(v128.load(pW), v128.load(pS), v128.load(pZ), maxCode, pA, true));
  accumulate(pC + 16, element(v128.load(pW, 16), v128.load(pS, 16), v128.load(pZ, 16), maxCode, pA + 16, true));
  accumulate(pC + 32, element(v128.load(pW, 32), v128.load(pS, 32), v128.load(pZ, 32), maxCode, pA + 32, true));
  accumulate(pC + 48, element(v128.load(pW, 48), v128.load(pS, 48), v128.load(pZ, 48), maxCode, pA + 48, true));
  accumulate(pC + 64, element(v128.load(pW, 64), v128.load(pS, 64), v128.load(pZ, 64), maxCode, pA + 64, true));
  accumulate(pC + 80, element(v128.load(pW, 80), v128.load(pS, 80), v128.load(pZ, 80), maxCode, pA + 80, true));
  accumulate(pC + 96, element(v128.load(pW, 96), v128.load(pS, 96), v128.load(pZ, 96), maxCode, pA + 96, true));
  accumulate(pC + 112, element(v128.load(pW, 112), v128.load(pS, 112), v128.load(pZ, 112), maxCode, pA + 112, true));
}

// ---------------------------------------------------------------------------------------------
// The optimizer step
// ---------------------------------------------------------------------------------------------

/**
 * Axis 1 (contiguous groups of g = 32·m < 512 elements). A "run" is one torch row of 32 elements, for
 * the group mean and for the error mean alike; the range starts at a group and a chunk boundary. Writes
 * every group's new z (f32 at pZ) and every chunk's error sum (f32 at pErrorOut, in order). Always
 * interleaved: here it measured as fast as one vector at a time even when no vector needs the power
 * (the slots share s and z, so fewer vectors stay alive), and far faster when many do.
 */
export function stepContiguous(
  pW: usize, pS: usize, pZ: usize, runs: u32, runsPerGroup: u32, runsPerHalf: u32, power: u32, maxCode: f32, groupSize: f32,
  state: usize, pErrorOut: usize,
): void {
  const mc = f32x4.splat(maxCode);
  powerVectors = 0;
  const mask = (<u32>1 << power) - 1;
  const errors = state + ERROR_LEVELS_AT;
  const groupSlots = state + GROUP_SLOTS_AT;
  zeroLevels(errors, 4);
  zeroLevels(groupSlots, 1);
  let ptr = pW;
  let run: u32 = 0, runInGroup: u32 = 0, runInHalf: u32 = 0, group: u32 = 0, half: u32 = 0;
  let sv = f32x4.splat(load<f32>(pS));
  let zv = f32x4.splat(load<f32>(pZ));
  do {
    row8(ptr, 0, 0, sv, zv, true, groupSlots, errors, mc);
    ptr += SLOTS * 16;
    run++;
    runInGroup++;
    runInHalf++;
    cascadePush(errors, runInHalf, mask, power);
    if (runInGroup == runsPerGroup) {
      store<f32>(pZ + (group << 2), combineLevels(groupSlots, 1) / groupSize);
      zeroLevels(groupSlots, 1);
      group++;
      runInGroup = 0;
      if (run < runs) {
        sv = f32x4.splat(load<f32>(pS + (group << 2)));
        zv = f32x4.splat(load<f32>(pZ + (group << 2)));
      }
    }
    if (runInHalf == runsPerHalf) {
      store<f32>(pErrorOut + (half << 2), combineLevels(errors, 4));
      zeroLevels(errors, 4);
      half++;
      runInHalf = 0;
    }
  } while (run < runs);
  store<i32>(state + POWER_VECTORS_AT, powerVectors);
}

/**
 * Axis 0 (groups are the columns of `[rows, cols]`; cols a multiple of 4). Sweeps `rows` rows from pW
 * in flat order, starting at a torch chunk boundary and at a multiple of 2^blockPower rows.
 * `multi_row_sum` sums each column in blocks of 2^blockPower rows and then the block sums; this kernel
 * writes each block's column sums as one row of `cols` floats from pBlocks (the last block may be
 * partial), and `combineColumns` adds the blocks up in torch's order. `interleaved` picks the order of
 * the 8 vectors of a run (row8 or row8Sequential): the same bits, a different speed (optimize-wasm.ts).
 */
// @ts-ignore: decorator
@inline function stepStridedOf(
  pW: usize, pS: usize, pZ: usize, pBlocks: usize, rows: u32, cols: u32, vectorsPerHalf: u32, power: u32, blockPower: u32,
  maxCode: f32, state: usize, pErrorOut: usize, interleaved: bool,
): void {
  const mc = f32x4.splat(maxCode);
  powerVectors = 0;
  const rowBytes = cols << 2;
  const mask = (<u32>1 << power) - 1;
  const errors = state + ERROR_LEVELS_AT;
  zeroLevels(errors, 4);
  // zero the block rows this call writes: ⌈rows / 2^blockPower⌉ of them
  const end = pBlocks + rowBytes * ((rows + (<u32>1 << blockPower) - 1) >> blockPower);
  for (let p = pBlocks; p < end; p += 16) v128.store(p, i32x4.splat(0));
  let ptr = pW;
  let row: u32 = 0, vector: u32 = 0, half: u32 = 0;
  do {
    const blockRow = pBlocks + (row >> blockPower) * rowBytes;
    let offset: u32 = 0;
    if ((rowBytes & (SLOTS * 16 - 1)) == 0) {
      // rows of whole torch rows (cols a multiple of 32): 8 vectors at a time, error slots fixed
      do {
        if (interleaved) row8(ptr + offset, pS + offset, pZ + offset, mc, mc, false, blockRow + offset, errors, mc);
        else row8Sequential(ptr + offset, pS + offset, pZ + offset, blockRow + offset, errors, mc);
        vector += SLOTS;
        cascadePush(errors, vector >> 3, mask, power);
        if (vector == vectorsPerHalf) {
          store<f32>(pErrorOut + (half << 2), combineLevels(errors, 4));
          zeroLevels(errors, 4);
          half++;
          vector = 0;
        }
        offset += SLOTS * 16;
      } while (offset < rowBytes);
    } else {
      do {
        const c = element(v128.load(ptr + offset), v128.load(pS + offset), v128.load(pZ + offset), mc, errors + ((vector & (SLOTS - 1)) << 4), true);
        accumulate(blockRow + offset, c);
        vector++;
        if ((vector & (SLOTS - 1)) == 0) {
          cascadePush(errors, vector >> 3, mask, power);
          if (vector == vectorsPerHalf) {
            store<f32>(pErrorOut + (half << 2), combineLevels(errors, 4));
            zeroLevels(errors, 4);
            half++;
            vector = 0;
          }
        }
        offset += 16;
      } while (offset < rowBytes);
    }
    ptr += rowBytes;
    row++;
  } while (row < rows);
  store<i32>(state + POWER_VECTORS_AT, powerVectors);
}

export function stepStrided(
  pW: usize, pS: usize, pZ: usize, pBlocks: usize, rows: u32, cols: u32, vectorsPerHalf: u32, power: u32, blockPower: u32,
  maxCode: f32, state: usize, pErrorOut: usize,
): void {
  stepStridedOf(pW, pS, pZ, pBlocks, rows, cols, vectorsPerHalf, power, blockPower, maxCode, state, pErrorOut, false);
}

export function stepStridedInterleaved(
  pW: usize, pS: usize, pZ: usize, pBlocks: usize, rows: u32, cols: u32, vectorsPerHalf: u32, power: u32, blockPower: u32,
  maxCode: f32, state: usize, pErrorOut: usize,
): void {
  stepStridedOf(pW, pS, pZ, pBlocks, rows, cols, vectorsPerHalf, power, blockPower, maxCode, state, pErrorOut, true);
}

/**
 * `multi_row_sum`'s cascade over the block sums of `stepStrided`, four columns at a time. Block k is
 * added into level 1; every 2^power blocks level 1 moves into level 2, every 2^(2·power) blocks level 2
 * into level 3; the total is ((partial block + L1) + L2) + L3 (torch-sum.ts `cascadeSum`). Writes the
 * column sums at pSums.
 */
export function combineColumns(pBlocks: usize, pSums: usize, cols: u32, fullBlocks: u32, partial: u32, power: u32): void {
  const rowBytes = cols << 2;
  const mask = (<u32>1 << power) - 1;
  for (let offset: u32 = 0; offset < rowBytes; offset += 16) {
    let l1 = i32x4.splat(0), l2 = i32x4.splat(0), l3 = i32x4.splat(0);
    let ptr = pBlocks + offset;
    for (let k: u32 = 0; k < fullBlocks;) {
      l1 = f32x4.add(l1, v128.load(ptr));
      k++;
      if ((k & mask) == 0) {
        l2 = f32x4.add(l2, l1);
        l1 = i32x4.splat(0);
        if ((k & (mask << power)) == 0) {
          l3 = f32x4.add(l3, l2);
          l2 = i32x4.splat(0);
        }
      }
      ptr += rowBytes;
    }
    const l0 = partial != 0 ? v128.load(ptr) : i32x4.splat(0);
    v128.store(pSums + offset, f32x4.add(f32x4.add(f32x4.add(l0, l1), l2), l3));
  }
}

/**
 * torch's `row_sum` of the columns [begin, end) of `[rows, cols]`: 4 interleaved cascades over rows
 * 4i + k (lane k), the leftover rows into lane 0, then lanes 0..3 in order.
 */
export function ilpColumns(
  pW: usize, pS: usize, pZ: usize, pSums: usize, rows: u32, cols: u32, begin: u32, end: u32, power: u32, maxCode: f32,
): void {
  const mc = f32x4.splat(maxCode);
  const rowBytes = cols << 2;
  const ilpRows = rows >> 2;
  const leftover = rows & 3;
  const mask = (<u32>1 << power) - 1;
  for (let column = begin; column < end; column++) {
    const sv = f32x4.splat(load<f32>(pS + (column << 2)));
    const zv = f32x4.splat(load<f32>(pZ + (column << 2)));
    let l0 = i32x4.splat(0), l1 = i32x4.splat(0), l2 = i32x4.splat(0), l3 = i32x4.splat(0);
    let base = pW + (column << 2);
    for (let ilpRow: u32 = 0; ilpRow < ilpRows;) {
      // lane k holds row 4i + k of the column
      let w = f32x4.splat(load<f32>(base));
      w = f32x4.replace_lane(w, 1, load<f32>(base + rowBytes));
      w = f32x4.replace_lane(w, 2, load<f32>(base + rowBytes * 2));
      w = f32x4.replace_lane(w, 3, load<f32>(base + rowBytes * 3));
      l0 = f32x4.add(l0, element(w, sv, zv, mc, 0, false));
      ilpRow++;
      if ((ilpRow & mask) == 0) {
        l1 = f32x4.add(l1, l0);
        l0 = i32x4.splat(0);
        if ((ilpRow & (mask << power)) == 0) {
          l2 = f32x4.add(l2, l1);
          l1 = i32x4.splat(0);
          if ((ilpRow & (mask << (power * 2))) == 0) {
            l3 = f32x4.add(l3, l2);
            l2 = i32x4.splat(0);
          }
        }
      }
      base += rowBytes << 2;
    }
    l0 = f32x4.add(f32x4.add(f32x4.add(l0, l1), l2), l3);
    let sum = f32x4.extract_lane(l0, 0);
    if (leftover != 0) {
      // lanes k < leftover hold the leftover rows; the others 0
      let w = f32x4.splat(load<f32>(base));
      w = f32x4.replace_lane(w, 1, leftover > 1 ? load<f32>(base + rowBytes) : 0);
      w = f32x4.replace_lane(w, 2, leftover > 2 ? load<f32>(base + rowBytes * 2) : 0);
      w = f32x4.replace_lane(w, 3, leftover > 3 ? load<f32>(base + rowBytes * 3) : 0);
      const c = element(w, sv, zv, mc, 0, false);
      sum += f32x4.extract_lane(c, 0);
      if (leftover > 1) sum += f32x4.extract_lane(c, 1);
      if (leftover > 2) sum += f32x4.extract_lane(c, 2);
    }
    sum += f32x4.extract_lane(l0, 1);
    sum += f32x4.extract_lane(l0, 2);
    sum += f32x4.extract_lane(l0, 3);
    store<f32>(pSums + (column << 2), sum);
  }
}

// ---------------------------------------------------------------------------------------------
// Around the optimizer: ranges, final codes, packing, dequantization
// ---------------------------------------------------------------------------------------------

/** The final codes clamp(round(W·s + z), 0, max_v) of four lanes, as 4 bytes at `addr`. */
// @ts-ignore: decorator
@inline function storeCodes(w: v128, s: v128, z: v128, maxCode: v128, addr: usize): void {
  const ints = i32x4.trunc_sat_f32x4_u(nearestCode(f32x4.mul(w, s), z, maxCode));
  const shorts = i16x8.narrow_i32x4_u(ints, ints);
  v128.store32_lane(addr, i8x16.narrow_i16x8_u(shorts, shorts), 0);
}

/** Final codes for axis 1. */
export function codesContiguous(pW: usize, pS: usize, pZ: usize, pCodes: usize, groups: u32, groupSize: u32, maxCode: f32): void {
  const mc = f32x4.splat(maxCode);
  let index: u32 = 0;
  for (let group: u32 = 0; group < groups; group++) {
    const sv = f32x4.splat(load<f32>(pS + (group << 2)));
    const zv = f32x4.splat(load<f32>(pZ + (group << 2)));
    for (const end = index + groupSize; index < end; index += 4) storeCodes(v128.load(pW + (index << 2)), sv, zv, mc, pCodes + index);
  }
}

/** Final codes for axis 0. */
export function codesStrided(pW: usize, pS: usize, pZ: usize, pCodes: usize, rows: u32, cols: u32, maxCode: f32): void {
  const mc = f32x4.splat(maxCode);
  let index: u32 = 0;
  for (let row: u32 = 0; row < rows; row++) {
    for (let column: u32 = 0; column < cols; column += 4) {
      storeCodes(v128.load(pW + (index << 2)), v128.load(pS + (column << 2)), v128.load(pZ + (column << 2)), mc, pCodes + index);
      index += 4;
    }
  }
}

/**
 * Per-group min and max (IEEE: NaN propagates, so a non-finite input shows in the result) for axis 1,
 * groupSize a multiple of 4.
 */
export function rangeContiguous(pW: usize, pMin: usize, pMax: usize, groups: u32, groupSize: u32): void {
  let ptr = pW;
  for (let group: u32 = 0; group < groups; group++) {
    let lo = f32x4.splat(Infinity), hi = f32x4.splat(-Infinity);
    for (const end = ptr + (groupSize << 2); ptr < end; ptr += 16) {
      const x = v128.load(ptr);
      lo = f32x4.min(lo, x);
      hi = f32x4.max(hi, x);
    }
    store<f32>(pMin + (group << 2), min(min(min(f32x4.extract_lane(lo, 0), f32x4.extract_lane(lo, 1)), f32x4.extract_lane(lo, 2)), f32x4.extract_lane(lo, 3)));
    store<f32>(pMax + (group << 2), max(max(max(f32x4.extract_lane(hi, 0), f32x4.extract_lane(hi, 1)), f32x4.extract_lane(hi, 2)), f32x4.extract_lane(hi, 3)));
  }
}

/** Per-column min and max of `[rows, cols]` (axis 0), cols a multiple of 4. */
export function rangeStrided(pW: usize, pMin: usize, pMax: usize, rows: u32, cols: u32): void {
  const rowBytes = cols << 2;
  for (let offset: u32 = 0; offset < rowBytes; offset += 16) {
    v128.store(pMin + offset, f32x4.splat(Infinity));
    v128.store(pMax + offset, f32x4.splat(-Infinity));
  }
  let ptr = pW;
  for (let row: u32 = 0; row < rows; row++) {
    for (let offset: u32 = 0; offset < rowBytes; offset += 16) {
      const x = v128.load(ptr + offset);
      v128.store(pMin + offset, f32x4.min(v128.load(pMin + offset), x));
      v128.store(pMax + offset, f32x4.max(v128.load(pMax + offset), x));
    }
    ptr += rowBytes;
  }
}

/**
 * bitpack.ts's uint8 packing, 16 bytes at a time: `out[i] = Σ_k codes[k·planeBytes + i] << (8 − nbits·(k + 1))`,
 * planeBytes a multiple of 16.
 */
export function packPlanes(pCodes: usize, pOut: usize, planeBytes: u32, planes: u32, nbits: u32): void {
  for (let offset: u32 = 0; offset < planeBytes; offset += 16) {
    let acc = i32x4.splat(0);
    for (let plane: u32 = 0; plane < planes; plane++) {
      acc = v128.or(acc, i8x16.shl(v128.load(pCodes + offset + plane * planeBytes), 8 - nbits * (plane + 1)));
    }
    v128.store(pOut + offset, acc);
  }
}

/** `fround(fround(code − zero) · scale)` of 4 codes (i32x4), stored at `addr`. */
// @ts-ignore: decorator
@inline function dequantize4(codes: v128, s: v128, z: v128, addr: usize): void {
  v128.store(addr, f32x4.mul(f32x4.sub(f32x4.convert_i32x4_u(codes), z), s));
}

/**
 * One output row of dequantize, columns 16 at a time, then 4. Axis 0 (`strided`) reads each column's
 * scale and zero; axis 1 uses the row's (`sv`, `zv`).
 */
// @ts-ignore: decorator
@inline function dequantizeRow(
  source: usize, target: usize, cols: u32, shift: u32, mask: v128, pScale: usize, pZero: usize, sv: v128, zv: v128, strided: bool,
): void {
  let column: u32 = 0;
  for (; column + 16 <= cols; column += 16) {
    const bytes = v128.and(i8x16.shr_u(v128.load(source + column), shift), mask);
    const at = column << 2;
    let half = i16x8.extend_low_i8x16_u(bytes);
    dequantize4(i32x4.extend_low_i16x8_u(half), strided ? v128.load(pScale + at) : sv, strided ? v128.load(pZero + at) : zv, target + at);
    dequantize4(i32x4.extend_high_i16x8_u(half), strided ? v128.load(pScale + at, 16) : sv, strided ? v128.load(pZero + at, 16) : zv, target + at + 16);
    half = i16x8.extend_high_i8x16_u(bytes);
    dequantize4(i32x4.extend_low_i16x8_u(half), strided ? v128.load(pScale + at, 32) : sv, strided ? v128.load(pZero + at, 32) : zv, target + at + 32);
    dequantize4(i32x4.extend_high_i16x8_u(half), strided ? v128.load(pScale + at, 48) : sv, strided ? v128.load(pZero + at, 48) : zv, target + at + 48);
  }
  for (; column < cols; column += 4) {
    const at = column << 2;
    const codes = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.and(i8x16.shr_u(v128.load32_zero(source + column), shift), mask)));
    dequantize4(codes, strided ? v128.load(pScale + at) : sv, strided ? v128.load(pZero + at) : zv, target + at);
  }
}

/**
 * float32 dequantization straight from uint8 packed planes, for the output rows [rowBegin, rowEnd),
 * written contiguously at pOut. Output row R = k·planeRows + r comes from packed row r at bit
 * 8 − nbits·(k + 1); cols a multiple of 4.
 */
export function dequantize(
  pPacked: usize, pScale: usize, pZero: usize, pOut: usize, planeRows: u32, cols: u32, rowBegin: u32, rowEnd: u32, nbits: u32, axis: u32,
): void {
  const codeMask: u32 = (<u32>1 << nbits) - 1;
  const mask = i8x16.splat(<i8>codeMask);
  let target = pOut;
  let plane = rowBegin / planeRows;
  let shift = 8 - nbits * (plane + 1);
  let planeEnd = (plane + 1) * planeRows;
  let source = pPacked + (rowBegin - plane * planeRows) * cols;
  for (let outRow = rowBegin; outRow < rowEnd; outRow++) {
    if (outRow == planeEnd) {
      plane++;
      shift = 8 - nbits * (plane + 1);
      planeEnd = (plane + 1) * planeRows;
      source = pPacked + (outRow - plane * planeRows) * cols;
    }
    if (axis == 1) {
      const sv = f32x4.splat(load<f32>(pScale + (outRow << 2)));
      const zv = f32x4.splat(load<f32>(pZero + (outRow << 2)));
      dequantizeRow(source, target, cols, shift, mask, pScale, pZero, sv, zv, false);
    } else {
      dequantizeRow(source, target, cols, shift, mask, pScale, pZero, mask, mask, true);
    }
    source += cols;
    target += cols << 2;
  }
}
