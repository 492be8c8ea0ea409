import { wasmApi } from '../../wasm/wasm-runtime.js';
import type { WasmMemory } from '../../wasm/wasm-runtime.js';
import type { KernelCall, WasmParallelRunner, WasmThreadPool } from '../../wasm/wasm-threads.js';
import { DYNAMIC_BASE, PAGE_BYTES } from './kernel-layout.js';
import { hqqModuleBytes, writePowTables } from './kernel-module.js';

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
  'stepContiguous', 'stepStrided', 'stepStridedInterleaved', 'combineColumns', 'ilpColumns', 'codesContiguous', 'codesStrided',
  'rangeContiguous', 'rangeStrided', 'packPlanes', 'dequantize',
] as const;
type KernelName = (typeof KERNEL_NAMES)[number];

export type HqqKernels = Readonly<Record<KernelName, KernelFunction>> & {
  /** Grows the memory to at least `bytes` and returns its (possibly new) buffer. */
  reserve(bytes: number): ArrayBufferLike;
  /** Helper threads the kernels may use (0 without a pool); they start on the first parallel call. */
  readonly helpers: number;
  /** Elements below which a tensor is not worth splitting between threads (setHqqThreadPool). */
  readonly minParallelElements: number;
  /** Starts the helpers if they are not running yet; false when they cannot run here. */
  startHelpers(): boolean;
  /** Runs `calls` on the helpers and `local` here, in parallel (sequentially without helpers). */
  parallel(calls: readonly HqqKernelCall[], local: () => void): void;
  /** Stops the helpers. */
  close(): void;
};

export interface HqqThreadOptions {
  /**
   * Tensors with fewer elements run on one thread. A step hands work over in tens of microseconds and
   * the helper starts in tens of milliseconds (once), so small flushes (a few heads × a few hundred
   * tokens) are faster alone; default 2^18 (1 MiB of float32).
   */
  readonly minParallelElements?: number;
}

const DEFAULT_MIN_PARALLEL_ELEMENTS = 1 << 18;

export interface HqqKernelCall extends KernelCall {
  readonly name: KernelName;
}

/** WebAssembly memories address 32 bits; stay well inside what engines grant. */
export const MAX_KERNEL_BYTES = 2 ** 31;
/** app/wasm/kernels/build.mjs builds the shared module with this maximum (asc --maximumMemory 32768); kernel-layout.test.ts holds them together. */
const MAX_PAGES = MAX_KERNEL_BYTES / PAGE_BYTES;

let kernels: HqqKernels | null | undefined;
let threadPool: WasmThreadPool | null = null;
let minParallelElements = DEFAULT_MIN_PARALLEL_ELEMENTS;

/**
 * Lets the optimizer use the pool's helper threads (one is enough: torch splits its sums in two),
 * or stops that with null. The kernels are compiled again on next use; the helpers start when a
 * tensor of at least `minParallelElements` first needs them.
 */
export function setHqqThreadPool(pool: WasmThreadPool | null, options: HqqThreadOptions = {}): void {
  const min = options.minParallelElements ?? DEFAULT_MIN_PARALLEL_ELEMENTS;
  if (pool === threadPool && min === minParallelElements) return;
  releaseHqqKernels();
  threadPool = pool;
  minParallelElements = min;
}

export function hqqKernels(): HqqKernels | null {
  if (kernels !== undefined) return kernels;
  kernels = null;
  const api = wasmApi();
  if (api === undefined) return kernels;
  const initial = Math.ceil(DYNAMIC_BASE / PAGE_BYTES);
  const pool = threadPool;
  if (pool !== null && pool.helpers > 0) {
    try {
      const memory = new api.Memory({ initial, maximum: MAX_PAGES, shared: true });
      const module = new api.Module(hqqModuleBytes(true));
      const instance = new api.Instance(module, { env: { memory } });
      writePowTables(memory.buffer);
      kernels = wrap(instance.exports, memory, { helpers: pool.helpers, attach: () => pool.attach(module, { env: { memory } }) });
    } catch {
      kernels = null; // no shared memory here: one thread
    }
    if (kernels !== null) return kernels;
  }
  try {
    const memory = new api.Memory({ initial });
    const instance = new api.Instance(new api.Module(hqqModuleBytes(false)), { env: { memory } });
    writePowTables(memory.buffer);
    kernels = wrap(instance.exports, memory, null);
  } catch {
    // No WebAssembly SIMD, or a browser main thread that refuses synchronous compilation: JS takes over.
    kernels = null;
  }
  return kernels;
}

interface LazyHelpers {
  readonly helpers: number;
  attach(): WasmParallelRunner | null;
}

function wrap(exports: Record<string, unknown>, memory: WasmMemory, lazy: LazyHelpers | null): HqqKernels {
  const functions = Object.fromEntries(KERNEL_NAMES.map((name) => [name, exports[name] as KernelFunction])) as Record<KernelName, KernelFunction>;
  /** undefined until the first parallel call starts the helpers; null when they could not start */
  let runner: WasmParallelRunner | null | undefined = lazy === null ? null : undefined;
  const startHelpers = (): boolean => {
    if (runner === undefined) runner = lazy!.attach();
    return runner !== null;
  };
  return {
    ...functions,
    helpers: lazy?.helpers ?? 0,
    minParallelElements,
    startHelpers,
    close: () => runner?.close(),
    reserve(bytes: number): ArrayBufferLike {
      const missing = bytes - memory.buffer.byteLength;
      if (missing > 0) memory.grow(Math.ceil(missing / PAGE_BYTES));
      return memory.buffer;
    },
    parallel(calls: readonly HqqKernelCall[], local: () => void): void {
      if (calls.length > 0 && startHelpers() && calls.length <= runner!.helpers) {
        runner!.run(calls, local);
        return;
      }
      local();
      for (const call of calls) functions[call.name](...call.args);
    },
  };
}

/** Drops the compiled kernels and their memory (and stops their helper threads); the next use compiles them again. */
export function releaseHqqKernels(): void {
  kernels?.close();
  kernels = undefined;
}

/** Rounds a byte offset up to 64 (one cache line; v128 accesses stay aligned). */
export function alignBytes(bytes: number): number {
  return Math.ceil(bytes / 64) * 64;
}
