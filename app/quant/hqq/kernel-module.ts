import { encodeModule } from '../../wasm/wasm-encoder.js';
import { POW_TABLES, POW_TABLE_BITS } from './shrink.js';
import { COMBINED_ENTRIES, COMBINED_FIRST_EXPONENT, TABLE_COMBINED, TABLE_EXPONENT, TABLE_MANTISSA } from './kernel-layout.js';
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

export function writePowTables(memory: ArrayBufferLike): void {
  const { mantissa, exponent } = POW_TABLES;
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
