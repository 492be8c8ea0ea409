import { POW_TABLE_BITS } from './shrink.js';

/**
 * Memory map of the HQQ WebAssembly kernels (bytes). Fixed regions first; per-call buffers start
 * at DYNAMIC_BASE and are placed by optimize-wasm.ts and dequantize-wasm.ts.
 */
export const PAGE_BYTES = 65536;

/** 1024 × (m_j^e, 2^-23/m_j) float64 pairs: shrink.ts `POW_TABLES.mantissa` */
export const TABLE_MANTISSA = 0;
/** 256 float64: shrink.ts `POW_TABLES.exponent` */
export const TABLE_EXPONENT = 16384;
/** 4 cascade levels × 8 v128 slots: the running torch sum of |W − W_r| (one thread chunk) */
export const ERROR_STATE = 18432;
/** float32 sum of |W − W_r| per thread chunk, written by the step kernels */
export const ERROR_OUT = 18944;
/** 8 v128 slots: the running torch sum of one axis-1 group */
export const GROUP_STATE = 19200;
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
