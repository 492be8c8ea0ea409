import { QuantizationError } from '../../errors.js';
import type { HqqGrid } from './grid.js';
import { paramsFromRanges } from './init-params.js';
import type { GroupRanges } from './init-params.js';
import { createJsEngine } from './optimize-js.js';
import { createWasmEngine } from './optimize-wasm.js';
import type { RunOrderChoice } from './optimize-wasm.js';

/**
 * HQQ's quantize pipeline around an engine (spec §3.2 steps 2–4): group ranges, initial parameters,
 * then `optimize_weights_proximal_legacy` (hqq >= 0.2.7, spec §3.3):
 *
 * - at most 20 steps; `best` starts at +inf (float32);
 * - each step updates z first, then compares the error of that step's W_r (computed with the z from
 *   *before* the update) against `best`;
 * - the first error that is not strictly lower stops the loop, and the z already updated in that
 *   step is kept (no rollback);
 * - final codes: clamp(round(W·s + z), 0, max_v) with the last z, then bit-packed.
 */
export const MAX_OPTIMIZER_STEPS = 20;

export interface OptimizerEngine {
  readonly name: EngineName;
  /** Per-group min and max; throws QuantizationError on a non-finite input. */
  groupRanges(): GroupRanges;
  /** Takes the initial parameters; `zero` is then updated in place by every step. */
  start(inverseScale: Float32Array, zero: Float32Array): void;
  /** Runs one step and returns the float32 mean |W − W_r|. */
  step(): number;
  /** The final codes, packed as bitpack.ts describes. */
  packedCodes(nbits: number): Uint8Array;
  /** Releases scratch buffers. */
  dispose(): void;
}

export type EngineName = 'js' | 'wasm';
/** `auto` takes the WebAssembly engine where the layout allows it and the runtime has SIMD. */
export type EngineChoice = EngineName | 'auto';

export interface OptimizerResult {
  /** per group, float32 */
  readonly inverseScale: Float32Array;
  /** per group, float32, after the last step */
  readonly zero: Float32Array;
  readonly packed: Uint8Array;
  /** The error of every executed step, as the golden manifest's `optimizer_step_mean_abs_err`. */
  readonly stepErrors: readonly number[];
  readonly engine: EngineName;
}

export function runHqq(values: Float32Array, grid: HqqGrid, nbits: number, choice: EngineChoice = 'auto',
  runOrder: RunOrderChoice = 'adaptive'): OptimizerResult {
  const maxCode = 2 ** nbits - 1;
  const engine = pickEngine(values, grid, maxCode, choice, runOrder);
  try {
    const { inverseScale, zero } = paramsFromRanges(engine.groupRanges(), maxCode);
    engine.start(inverseScale, zero);
    const stepErrors: number[] = [];
    let best = Infinity;
    for (let i = 0; i < MAX_OPTIMIZER_STEPS; i++) {
      const error = engine.step();
      stepErrors.push(error);
      if (!(error < best)) break;
      best = error;
    }
    return { inverseScale, zero, packed: engine.packedCodes(nbits), stepErrors, engine: engine.name };
  } finally {
    engine.dispose();
  }
}

function pickEngine(values: Float32Array, grid: HqqGrid, maxCode: number, choice: EngineChoice, runOrder: RunOrderChoice): OptimizerEngine {
  if (choice !== 'js') {
    const wasm = createWasmEngine(values, grid, maxCode, runOrder);
    if (wasm !== undefined) return wasm;
    if (choice === 'wasm') {
      throw new QuantizationError('the WebAssembly HQQ engine cannot run here (no WebAssembly SIMD, or a layout it does not cover, see optimize-wasm.ts); use engine "auto" or "js".');
    }
  }
  return createJsEngine(values, grid, maxCode);
}
