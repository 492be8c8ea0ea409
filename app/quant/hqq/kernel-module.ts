import { encodeModule } from './wasm-builder.js';
import { POW_TABLES, POW_TABLE_BITS } from './shrink.js';
import { COMBINED_ENTRIES, COMBINED_FIRST_EXPONENT, TABLE_COMBINED, TABLE_EXPONENT, TABLE_MANTISSA } from './kernel-layout.js';
import { ilpColumns, stepContiguous, stepStrided } from './kernel-step.js';
import { codesContiguous, codesStrided, dequantize, packPlanes, rangeContiguous, rangeStrided } from './kernel-io.js';

/**
 * The HQQ WebAssembly module: its bytes (assembled at runtime by wasm-builder.ts, so nothing binary
 * is shipped) and the power tables it expects in memory (kernel-layout.ts).
 */
export function hqqKernelModuleBytes(): Uint8Array {
  return encodeModule([
    stepContiguous(), stepStrided(), ilpColumns(), codesContiguous(), codesStrided(),
    rangeContiguous(), rangeStrided(), packPlanes(), dequantize(),
  ], 1);
}

export function writePowTables(memory: ArrayBuffer): void {
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
