import type { WasmImports, WasmModule } from './wasm-runtime.js';

/**
 * Helper threads for WebAssembly kernels that split one call's work between threads. The pure core
 * starts no threads itself: a host injects a pool (app/node/wasm-thread-pool.ts implements one with
 * worker_threads), and kernels fall back to one thread without it.
 *
 * A helper instantiates the same module with the same (shared) memory, so a kernel call runs on it
 * exactly as on the calling thread. Results stay deterministic because the caller decides which
 * thread computes what; the pool only runs the calls.
 */
export interface KernelCall {
  /** an exported function */
  readonly name: string;
  /** its arguments (i32 or f32 values) */
  readonly args: readonly number[];
}

export interface WasmThreadPool {
  /** Helper threads offered on top of the caller's own. */
  readonly helpers: number;
  /**
   * Instantiates `module` with `imports` on every helper. The imports must be shareable between
   * threads (shared memories). Returns null when the host cannot run helpers for it.
   */
  attach(module: WasmModule, imports: WasmImports): WasmParallelRunner | null;
}

export interface WasmParallelRunner {
  /** Helper threads available (as WasmThreadPool.helpers). */
  readonly helpers: number;
  /**
   * Starts `calls[i]` on helper i (at most `helpers` calls), runs `local` on this thread meanwhile,
   * and returns once all are done. A call its helper has not started by then may run on this thread
   * instead: calls must not depend on where they run. Synchronous: the calling thread blocks until
   * the helpers finish. Throws when a call failed.
   */
  run(calls: readonly KernelCall[], local: () => void): void;
  /** Stops the helpers; the runner is unusable afterwards. */
  close(): void;
}
