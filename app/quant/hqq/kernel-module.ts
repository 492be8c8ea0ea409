import { HQQ_WASM } from '../../wasm/built/hqq.js';
import { HQQ_SHARED_WASM } from '../../wasm/built/hqq-shared.js';
import { POW_TABLES, POW_TABLE_BITS, SHRINK_WEIGHT, SHRINK_ZERO_BELOW } from './shrink.js';
import {
  COMBINED_ENTRIES, COMBINED_FIRST_EXPONENT, TABLE_COEFFICIENTS, TABLE_COMBINED, TABLE_EXPONENT, TABLE_MANTISSA, TABLE_VECTORS,
} from './kernel-layout.js';

/**
 * The HQQ WebAssembly module: its bytes (AssemblyScript, app/wasm/kernels/hqq.ts, built into app/wasm/built/ by
 * app/wasm/kernels/build.mjs) and the tables and constants it expects in memory (kernel-layout.ts). The module
 * imports `env.memory`; the `shared` build imports a shared memory of at most MAX_KERNEL_BYTES
 * (kernels.ts), which helper threads can use too.
 */
export function hqqModuleBytes(shared: boolean): Uint8Array {
  return shared ? HQQ_SHARED_WASM : HQQ_WASM;
}

export function writePowTables(memory: ArrayBufferLike): void {
  const { mantissa, exponent, coefficients } = POW_TABLES;
  new Float64Array(memory, TABLE_COEFFICIENTS, coefficients.length).set(coefficients);
  const lanes = (value: number): number[] => [value, value, value, value];
  new Float32Array(memory, TABLE_VECTORS, 8).set([...lanes(SHRINK_ZERO_BELOW), ...lanes(SHRINK_WEIGHT)]);
  new Int32Array(memory, TABLE_VECTORS + 32, 16).set([
    ...lanes(-0x80000000), ...lanes((1 << (23 - POW_TABLE_BITS)) - 1), ...lanes((1 << POW_TABLE_BITS) - 1),
    ...lanes(COMBINED_FIRST_EXPONENT << POW_TABLE_BITS),
  ]);
  new Float64Array(memory, TABLE_VECTORS + 96, 2).fill(1);
  new Float64Array(memory, TABLE_MANTISSA, mantissa.length).set(mantissa);
  new Float64Array(memory, TABLE_EXPONENT, exponent.length).set(exponent);
  const combined = new Float64Array(memory, TABLE_COMBINED, 2 * COMBINED_ENTRIES);
  const perExponent = 1 << POW_TABLE_BITS;
  for (let i = 0; i < COMBINED_ENTRIES; i++) {
    const j = i % perExponent;
    combined[2 * i] = mantissa[2 * j]! * exponent[COMBINED_FIRST_EXPONENT + Math.floor(i / perExponent)]!;
    combined[2 * i + 1] = mantissa[2 * j + 1]!;
  }
}
