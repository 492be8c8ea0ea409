import { groupOf, type HqqGrid } from './grid.js';
import type { OptimizerEngine } from './optimizer.js';
import { roundHalfEven } from '../rounding.js';
import { packCodes } from './bitpack.js';
import { groupRanges } from './init-params.js';
import { SHRINK_ZERO_BELOW, shrink, shrinkPow } from './shrink.js';
import type { ShrinkPower } from './shrink.js';
import { columnSums, fullSum, rowSums } from './torch-sum.js';
import { checkFinite } from './validate.js';

/**
 * One `optimize_weights_proximal_legacy_step` (spec §3.2 step 3) in plain JavaScript, float32 via
 * Math.fround after every torch op. This engine handles any layout; the WebAssembly engine
 * (optimize-wasm.ts) computes the same bits 30–50x faster for the common ones.
 *
 *   W_q  = clamp(round(W·s + z), 0, max_v)
 *   W_r  = (W_q − z) / s
 *   W_e  = shrink_lp(W − W_r)
 *   z    = mean(W_q − (W − W_e)·s, axis)      torch's summation order, torch-sum.ts
 *   err  = mean(|W − W_r|)                     over all N elements
 */
const fround = Math.fround;

/** `power` replaces kvscope's float32 power in tests (test-support/sleef-powf.ts). */
export function createJsEngine(values: Float32Array, grid: HqqGrid, maxCode: number, power: ShrinkPower = shrinkPow): OptimizerEngine {
  const target = new Float32Array(grid.count); // W_q − (W − W_e)·s, summed per group
  const residual = new Float32Array(grid.count); // |W − W_r|, summed over everything
  const sums = new Float32Array(grid.groups);
  const divisor = fround(grid.groupSize);
  const count = fround(grid.count);
  let inverseScale: Float32Array = new Float32Array(0);
  let zero: Float32Array = new Float32Array(0);
  /** target[i] = W_q − (W − W_e)·s and residual[i] = |W − W_r| for element i of a group with s, z */
  const element = (i: number, s: number, z: number): void => {
    const w = values[i]!;
    const ws = fround(w * s);
    const q = clampCode(roundHalfEven(fround(ws + z)), maxCode);
    const e = fround(w - fround(fround(q - z) / s));
    const a = Math.abs(e);
    // below the threshold W_e = 0, so (W − W_e)·s is W·s (shrink.ts)
    target[i] = a < SHRINK_ZERO_BELOW ? fround(q - ws) : fround(q - fround(fround(w - shrink(e, power)) * s));
    residual[i] = a;
  };
  return {
    name: 'js',
    groupRanges() {
      checkFinite(values);
      return groupRanges(values, grid);
    },
    start(s: Float32Array, z: Float32Array): void {
      inverseScale = s;
      zero = z;
    },
    step(): number {
      if (grid.axis === 1) {
        for (let k = 0, i = 0; k < grid.groups; k++) {
          for (const end = i + grid.groupSize; i < end; i++) element(i, inverseScale[k]!, zero[k]!);
        }
        rowSums(target, grid.rows, grid.cols, sums);
      } else {
        for (let r = 0, i = 0; r < grid.rows; r++) {
          for (let c = 0; c < grid.cols; c++, i++) element(i, inverseScale[c]!, zero[c]!);
        }
        columnSums(target, grid.rows, grid.cols, sums);
      }
      for (let k = 0; k < grid.groups; k++) zero[k] = sums[k]! / divisor;
      return fround(fullSum(residual, 0, grid.count) / count);
    },
    packedCodes(nbits: number): Uint8Array {
      const codes = new Uint8Array(grid.count);
      for (let i = 0; i < grid.count; i++) {
        const k = groupOf(grid, i);
        codes[i] = clampCode(roundHalfEven(fround(fround(values[i]! * inverseScale[k]!) + zero[k]!)), maxCode);
      }
      return packCodes(codes, grid.rows, grid.cols, nbits);
    },
    dispose(): void {},
  };
}

/** `clamp(min_max[0], min_max[1])` with min 0 */
export function clampCode(q: number, maxCode: number): number {
  return q < 0 ? 0 : q > maxCode ? maxCode : q;
}
