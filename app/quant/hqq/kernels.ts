import { wasmApi } from '../../wasm/wasm-runtime.js';
import type { WasmMemory } from '../../wasm/wasm-runtime.js';
import type { KernelCall, WasmParallelRunner, WasmThreadPool } from '../../wasm/wasm-threads.js';
import { DYNAMIC_BASE, PAGE_BYTES } from './kernel-layout.js';
import { hqqKernelModuleBytes, writePowTables } from './kernel-module.js';

/**
 * The compiled HQQ WebAssembly kernels and their one memory, shared by the optimizer engine and
 * dequantization. Compiled on first use and kept for the process; the memory grows to the largest
 * tensor handled (about 5.5 bytes per element when quantizing, the packed codes plus a 4 MiB output
 * chunk when dequantizing) and `releaseHqqKernels()` drops it. Calls never interleave (quantize and
 * dequantize are synchronous).
 *
 * With a thread pool (`setHqqThreadPool`), the memory is a shared one and a helper thread runs half
 * of each optimizer step (optimize-wasm.ts decides the split, so results do not depend on it).
 */
type KernelFunction = (...args: number[]) => void;

const KERNEL_NAMES = [
  'stepContiguous', 'stepStrided', 'combineColumns', 'ilpColumns', 'codesContiguous', 'codesStrided',
  'rangeContiguous', 'rangeStrided', 'packPlanes', 'dequantize',
] as const;
type KernelName = (typeof KERNEL_NAMES)[number];

export type HqqKernels = Readonly<Record<KernelName, KernelFunction>> & {
  /** Grows the memory to at least `bytes` and returns its (possibly new) buffer. */
  reserve(bytes: number): ArrayBufferLike;
  /** Helper threads sharing the memory, or null. */
  readonly runner: WasmParallelRunner | null;
  /** Runs `calls` on the helpers and `local` here, in parallel (sequentially without helpers). */
  parallel(calls: readonly HqqKernelCall[], local: () => void): void;
};

export interface HqqKernelCall extends KernelCall {
  readonly name: KernelName;
}

/** WebAssembly memories address 32 bits; stay well inside what engines grant. */
export const MAX_KERNEL_BYTES = 2 ** 31;
const MAX_PAGES = MAX_KERNEL_BYTES / PAGE_BYTES;

let kernels: HqqKernels | null | undefined;
let threadPool: WasmThreadPool | null = null;

/**
 * Lets the optimizer use the pool's helper threads (one is enough: torch splits its sums in two),
 * or stops that with null. The kernels are compiled again on next use.
 */
export function setHqqThreadPool(pool: WasmThreadPool | null): void {
  if (pool === threadPool) return;
  releaseHqqKernels();
  threadPool = pool;
}

export function hqqKernels(): HqqKernels | null {
  if (kernels !== undefined) return kernels;
  kernels = null;
  const api = wasmApi();
  if (api === undefined) return kernels;
  const initial = Math.ceil(DYNAMIC_BASE / PAGE_BYTES);
  if (threadPool !== null && threadPool.helpers > 0) {
    try {
      const memory = new api.Memory({ initial, maximum: MAX_PAGES, shared: true });
      const module = new api.Module(hqqKernelModuleBytes(MAX_PAGES));
      const instance = new api.Instance(module, { env: { memory } });
      writePowTables(memory.buffer);
      const runner = threadPool.attach(module, { env: { memory } });
      if (runner !== null) kernels = wrap(instance.exports, memory, runner);
    } catch {
      kernels = null; // no shared memory here: one thread
    }
    if (kernels !== null) return kernels;
  }
  try {
    const memory = new api.Memory({ initial });
    const instance = new api.Instance(new api.Module(hqqKernelModuleBytes()), { env: { memory } });
    writePowTables(memory.buffer);
    kernels = wrap(instance.exports, memory, null);
  } catch {
    // No WebAssembly SIMD, or a browser main thread that refuses synchronous compilation: JS takes over.
    kernels = null;
  }
  return kernels;
}

function wrap(exports: Record<string, unknown>, memory: WasmMemory, runner: WasmParallelRunner | null): HqqKernels {
  const functions = Object.fromEntries(KERNEL_NAMES.map((name) => [name, exports[name] as KernelFunction])) as Record<KernelName, KernelFunction>;
  return {
    ...functions,
    runner,
    reserve(bytes: number): ArrayBufferLike {
      const missing = bytes - memory.buffer.byteLength;
      if (missing > 0) memory.grow(Math.ceil(missing / PAGE_BYTES));
      return memory.buffer;
    },
    parallel(calls: readonly HqqKernelCall[], local: () => void): void {
      if (runner !== null && calls.length <= runner.helpers) {
        runner.run(calls, local);
        return;
      }
      local();
      for (const call of calls) functions[call.name](...call.args);
    },
  };
}

/** Drops the compiled kernels and their memory (and stops their helper threads); the next use compiles them again. */
export function releaseHqqKernels(): void {
  kernels?.runner?.close();
  kernels = undefined;
}

/** Rounds a byte offset up to 64 (one cache line; v128 accesses stay aligned). */
export function alignBytes(bytes: number): number {
  return Math.ceil(bytes / 64) * 64;
}
