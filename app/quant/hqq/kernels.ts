import { DYNAMIC_BASE, PAGE_BYTES } from './kernel-layout.js';
import { hqqKernelModuleBytes, writePowTables } from './kernel-module.js';

/**
 * The compiled HQQ WebAssembly kernels and their one memory, shared by the optimizer engine and
 * dequantization. Compiled on first use and kept for the process; the memory grows to the largest
 * tensor handled (about 5.5 bytes per element when quantizing, the packed codes plus a 4 MiB output
 * chunk when dequantizing) and `releaseHqqKernels()` drops it. Calls never interleave (quantize and dequantize are synchronous).
 *
 * `WebAssembly` is reached through `globalThis` with a minimal local type: the pure core compiles
 * without DOM or Node typings (tsconfig.app.json), and a runtime without it falls back to JavaScript.
 */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { readonly exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
}

type KernelFunction = (...args: number[]) => void;

export interface HqqKernels {
  readonly stepContiguous: KernelFunction;
  readonly stepStrided: KernelFunction;
  readonly ilpColumns: KernelFunction;
  readonly codesContiguous: KernelFunction;
  readonly codesStrided: KernelFunction;
  readonly rangeContiguous: KernelFunction;
  readonly rangeStrided: KernelFunction;
  readonly packPlanes: KernelFunction;
  readonly dequantize: KernelFunction;
  /** Grows the memory to at least `bytes` and returns its (possibly new) buffer. */
  reserve(bytes: number): ArrayBuffer;
}

/** WebAssembly memories address 32 bits; stay well inside what engines grant. */
export const MAX_KERNEL_BYTES = 2 ** 31;

let kernels: HqqKernels | null | undefined;

export function hqqKernels(): HqqKernels | null {
  if (kernels !== undefined) return kernels;
  kernels = null;
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) return kernels;
  try {
    const memory = new api.Memory({ initial: Math.ceil(DYNAMIC_BASE / PAGE_BYTES) });
    const instance = new api.Instance(new api.Module(hqqKernelModuleBytes()), { env: { memory } });
    writePowTables(memory.buffer);
    const fn = (name: string): KernelFunction => instance.exports[name] as KernelFunction;
    kernels = {
      stepContiguous: fn('stepContiguous'),
      stepStrided: fn('stepStrided'),
      ilpColumns: fn('ilpColumns'),
      codesContiguous: fn('codesContiguous'),
      codesStrided: fn('codesStrided'),
      rangeContiguous: fn('rangeContiguous'),
      rangeStrided: fn('rangeStrided'),
      packPlanes: fn('packPlanes'),
      dequantize: fn('dequantize'),
      reserve(bytes: number): ArrayBuffer {
        const missing = bytes - memory.buffer.byteLength;
        if (missing > 0) memory.grow(Math.ceil(missing / PAGE_BYTES));
        return memory.buffer;
      },
    };
  } catch {
    // No WebAssembly SIMD, or a browser main thread that refuses synchronous compilation: JS takes over.
    kernels = null;
  }
  return kernels;
}

/** Drops the compiled kernels and their memory; the next use compiles them again. */
export function releaseHqqKernels(): void {
  kernels = undefined;
}

/** Rounds a byte offset up to 64 (one cache line; v128 accesses stay aligned). */
export function alignBytes(bytes: number): number {
  return Math.ceil(bytes / 64) * 64;
}
