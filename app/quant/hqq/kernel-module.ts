import { encodeModule } from '../../wasm/wasm-encoder.js';
import { POW_TABLES, POW_TABLE_BITS, SHRINK_WEIGHT, SHRINK_ZERO_BELOW } from './shrink.js';
import {
  COMBINED_ENTRIES, COMBINED_FIRST_EXPONENT, TABLE_COEFFICIENTS, TABLE_COMBINED, TABLE_EXPONENT, TABLE_MANTISSA, TABLE_VECTORS,
} from './kernel-layout.js';
import { HQQ_WASM } from '../../wasm/built/hqq.js';
import { HQQ_SHARED_WASM } from '../../wasm/built/hqq-shared.js';
import { combineColumns, ilpColumns, stepContiguous, stepStrided } from './kernel-step.js';
import { codesContiguous, codesStrided, dequantize, packPlanes, rangeContiguous, rangeStrided } from './kernel-io.js';

/**
 * The HQQ WebAssembly module: its bytes (assembled at runtime by app/wasm/wasm-encoder.ts, so nothing
 * binary is shipped) and the power tables it expects in memory (kernel-layout.ts). The module imports
 * `env.memory`; with `maxPages` it imports a shared memory, which helper threads can use too.
 */
export function hqqKernelModuleBytes(maxPages?: number): Uint8Array {
  const functions = [
    stepContiguous(), stepStrided(false), stepStrided(true), combineColumns(), ilpColumns(), codesContiguous(), codesStrided(),
    rangeContiguous(), rangeStrided(), packPlanes(), dequantize(),
  ].map((f) => f.build());
  return encodeModule(functions, maxPages === undefined
    ? { import: ['env', 'memory'], pages: 1 }
    : { import: ['env', 'memory'], pages: 1, maxPages, shared: true });
}

/** TEMPORARY (bench comparison of the bytecode and AssemblyScript kernels): which build hqqModuleBytes returns. */
let bytecodeForBench = false;
export function useHqqBytecodeForBench(on: boolean): void {
  bytecodeForBench = on;
}

/**
 * The HQQ module's bytes: AssemblyScript (kernels/hqq.ts, built into app/wasm/built/ by kernels/build.mjs),
 * importing `env.memory`; `shared`: a shared memory of at most MAX_KERNEL_BYTES, for helper threads.
 */
export function hqqModuleBytes(shared: boolean, maxPages: number): Uint8Array {
  if (bytecodeForBench) return shared ? hqqKernelModuleBytes(maxPages) : hqqKernelModuleBytes();
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
