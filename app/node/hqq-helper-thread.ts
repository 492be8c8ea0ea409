import { availableParallelism } from 'node:os';
import { setHqqThreadPool } from '../quant/hqq/hqq.js';
import { createWasmThreadPool } from './wasm-thread-pool.js';

/**
 * Gives the HQQ optimizer one helper thread where the machine has a second core: on the 2-core
 * reference machines that is what lifts HQQ quantization past its 90 MB/s target (one thread: about
 * 53 MB/s at 2 bits; bench/hqq.ts). The results are the same bits either way (optimize-wasm.ts), so
 * this is a host decision only. Called by the hosts that quantize: the generation worker's engine
 * (app/node/run-generation.ts) and `kvscope quantize`.
 *
 * The helper is a worker_threads thread, unref'd, started once per thread that calls this (the
 * kernels are per thread) when the first tensor large enough to split comes along (2^18 elements,
 * app/quant/hqq/kernels.ts): a small model's flushes run alone and never pay for its start. `KVSCOPE_HQQ_THREADS=1` keeps the
 * optimizer on one thread (to compare, or on a machine that is busy with something else).
 */
let enabled = false;

/** Installs the helper (once per thread) unless unwanted; returns whether the optimizer has one. */
export function useHqqHelperThread(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  if (!enabled && hqqHelperWanted(env)) {
    // Starts nothing yet: the pool attaches its thread when the kernels are first compiled.
    setHqqThreadPool(createWasmThreadPool(1));
    enabled = true;
  }
  return enabled;
}

export function hqqHelperWanted(env: Readonly<Record<string, string | undefined>>): boolean {
  return env['KVSCOPE_HQQ_THREADS'] !== '1' && availableParallelism() >= 2;
}
