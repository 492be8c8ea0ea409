import { describe, expect, it } from 'vitest';
import { HQQ_WASM } from '../../wasm/built/hqq.js';
import { HQQ_SHARED_WASM } from '../../wasm/built/hqq-shared.js';
import { wasmApi } from '../../wasm/wasm-runtime.js';
import {
  COMBINED_BITS, COMBINED_FIRST_EXPONENT, DYNAMIC_BASE, ERROR_LEVELS_AT, ERROR_OUT, GROUP_SLOTS_AT, MAX_KERNEL_THREADS, PAGE_BYTES,
  POWER_VECTORS_AT, TABLE_COEFFICIENTS, TABLE_COMBINED, TABLE_EXPONENT, TABLE_MANTISSA, TABLE_VECTORS, THREAD_STATE_BYTES, VECTOR_BYTES,
} from './kernel-layout.js';
import { writePowTables } from './kernel-module.js';
import { MAX_KERNEL_BYTES } from './kernels.js';
import { POW_TABLES, POW_TABLE_BITS, SHRINK_WEIGHT, SHRINK_ZERO_BELOW } from './shrink.js';

/**
 * The memory map is declared twice, in kernel-layout.ts (which the TypeScript drivers use) and in the
 * AssemblyScript source (app/wasm/kernels/hqq.ts, which exports its constants): they must agree, and the tables
 * kernel-module.ts writes must be where the kernels read them.
 */
function kernelConstants(): Record<string, number> {
  const api = wasmApi()!;
  const memory = new api.Memory({ initial: Math.ceil(DYNAMIC_BASE / PAGE_BYTES) });
  const exports = new api.Instance(new api.Module(HQQ_WASM), { env: { memory } }).exports;
  const constants: Record<string, number> = {};
  for (const [name, value] of Object.entries(exports)) {
    if (typeof value === 'object' && value !== null && 'value' in value) constants[name] = (value as { value: number }).value;
  }
  return constants;
}

describe('HQQ kernel memory map', () => {
  it('is the same in kernel-layout.ts and in the AssemblyScript kernels', () => {
    expect(kernelConstants()).toMatchObject({
      TABLE_MANTISSA, TABLE_EXPONENT, TABLE_VECTORS, TABLE_COEFFICIENTS, TABLE_COMBINED, COMBINED_FIRST_EXPONENT, POW_TABLE_BITS,
      COMBINED_BITS, ERROR_LEVELS_AT, GROUP_SLOTS_AT, POWER_VECTORS_AT,
    });
  });

  it('builds the shared module for the shared memory kernels.ts makes (2 GiB at most)', () => {
    const api = wasmApi()!;
    const memory = new api.Memory({ initial: Math.ceil(DYNAMIC_BASE / PAGE_BYTES), maximum: MAX_KERNEL_BYTES / PAGE_BYTES, shared: true });
    expect(() => new api.Instance(new api.Module(HQQ_SHARED_WASM), { env: { memory } })).not.toThrow();
    // and the unshared module refuses it, as the shared one refuses an unshared memory
    expect(() => new api.Instance(new api.Module(HQQ_WASM), { env: { memory } })).toThrow();
    expect(() => new api.Instance(new api.Module(HQQ_SHARED_WASM), { env: { memory: new api.Memory({ initial: 1 }) } })).toThrow();
  });

  it('keeps its fixed regions apart', () => {
    expect(TABLE_EXPONENT).toBe(TABLE_MANTISSA + POW_TABLES.mantissa.byteLength);
    expect(ERROR_OUT + 4 * MAX_KERNEL_THREADS).toBeLessThanOrEqual(TABLE_VECTORS);
    expect(TABLE_VECTORS + VECTOR_BYTES).toBeLessThanOrEqual(TABLE_COEFFICIENTS);
    expect(TABLE_COEFFICIENTS + 8 * POW_TABLES.coefficients.length).toBeLessThanOrEqual(TABLE_COMBINED);
    expect(POWER_VECTORS_AT + 4).toBeLessThanOrEqual(THREAD_STATE_BYTES);
  });

  it('has the vector constants and coefficients where the kernels read them', () => {
    const k = kernelConstants();
    const memory = new ArrayBuffer(DYNAMIC_BASE);
    writePowTables(memory);
    const at = (name: string): number => TABLE_VECTORS + k[name]!;
    expect(Array.from(new Float32Array(memory, at('VECTOR_SKIP'), 4))).toEqual(Array(4).fill(SHRINK_ZERO_BELOW));
    expect(Array.from(new Float32Array(memory, at('VECTOR_TENTH'), 4))).toEqual(Array(4).fill(SHRINK_WEIGHT));
    expect(Array.from(new Uint32Array(memory, at('VECTOR_SIGN'), 4))).toEqual(Array(4).fill(0x80000000));
    expect(Array.from(new Int32Array(memory, at('VECTOR_LOW_MASK'), 4))).toEqual(Array(4).fill((1 << (23 - POW_TABLE_BITS)) - 1));
    expect(Array.from(new Int32Array(memory, at('VECTOR_TABLE_MASK'), 4))).toEqual(Array(4).fill((1 << POW_TABLE_BITS) - 1));
    expect(Array.from(new Int32Array(memory, at('VECTOR_FIRST'), 4))).toEqual(Array(4).fill(COMBINED_FIRST_EXPONENT << POW_TABLE_BITS));
    expect(Array.from(new Float64Array(memory, at('VECTOR_ONE'), 2))).toEqual([1, 1]);
    expect(Array.from(new Float64Array(memory, TABLE_COEFFICIENTS, 4))).toEqual([...POW_TABLES.coefficients]);
  });
});
