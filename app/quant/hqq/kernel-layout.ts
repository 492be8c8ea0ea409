import { POW_TABLE_BITS } from './shrink.js';

/**
 * Memory map of the HQQ WebAssembly kernels (bytes). Fixed regions first; per-call buffers start
 * at DYNAMIC_BASE and are placed by optimize-wasm.ts and dequantize-wasm.ts.
 */
export { WASM_PAGE_BYTES as PAGE_BYTES } from '../../wasm/wasm-runtime.js';

/** 1024 × (m_j^e, 2^-23/m_j) float64 pairs: shrink.ts `POW_TABLES.mantissa` */
export const TABLE_MANTISSA = 0;
/** 256 float64: shrink.ts `POW_TABLES.exponent` */
export const TABLE_EXPONENT = 16384;
/**
 * Scratch of one thread of a step kernel (app/wasm/kernels/hqq.ts): the running torch sum of |W − W_r| (4
 * cascade levels × 8 v128 slots) at +0, the running sum of one axis-1 group (8 slots) at +512, and
 * at +640 the i32 count of vectors of the last call with a lane that needed the power.
 */
export const THREAD_STATE = 18432;
export const THREAD_STATE_BYTES = 768;
export const ERROR_LEVELS_AT = 0;
export const GROUP_SLOTS_AT = 512;
export const POWER_VECTORS_AT = 640;
/** The step kernels split between at most this many threads (torch's two error chunks, torch-sum.ts). */
export const MAX_KERNEL_THREADS = 2;
/** float32 sum of |W − W_r| per torch thread chunk, written by the step kernels */
export const ERROR_OUT = THREAD_STATE + MAX_KERNEL_THREADS * THREAD_STATE_BYTES;
/**
 * The element work's vector constants, 16 bytes each (app/wasm/kernels/hqq.ts reads them at each use, as a
 * spilled local: a v128.const in a loop is rebuilt at every use): f32x4(SHRINK_ZERO_BELOW),
 * f32x4(SHRINK_WEIGHT), i32x4(sign bit), i32x4(low mantissa bits below the table index),
 * i32x4(table index mask), i32x4(TABLE_COMBINED's first entry), f64x2(1).
 */
export const TABLE_VECTORS = 20320;
export const VECTOR_BYTES = 7 * 16;
/** 4 float64: shrink.ts `POW_TABLES.coefficients` (C1..C4) */
export const TABLE_COEFFICIENTS = 20448;
/**
 * (mantissa[2j] · exponent[b], mantissa[2j + 1]) float64 pairs for the 16 biased exponents
 * b = 124..139 (0.125 <= x < 8192): the product `shrinkPow` forms, precomputed, so the common case
 * needs one table entry per lane.
 */
export const TABLE_COMBINED = 20480;
export const COMBINED_FIRST_EXPONENT = 124;
export const COMBINED_BITS = POW_TABLE_BITS + 4;
export const COMBINED_ENTRIES = 1 << COMBINED_BITS;
export const DYNAMIC_BASE = TABLE_COMBINED + COMBINED_ENTRIES * 16;

/** Scratch of thread `t`. */
export function threadState(t: number): number {
  return THREAD_STATE + t * THREAD_STATE_BYTES;
}
