import { roundToFloat16 } from '../tensor/float16.js';
import type { KvDtype } from '../tensor/kv-tensor.js';

/**
 * The orthonormal Hadamard rotation along head_dim (kvscope extension `--rotate hadamard`; llama.cpp
 * PR #21038 rotates every quantized KV cache this way, QuaRot and SpinQuant before it). Each row of
 * `headDim` values is split into blocks of `block` values (a power of two) and each block is
 * multiplied by H_block / √block, the Sylvester Hadamard matrix scaled to be orthonormal. That matrix
 * is symmetric and orthogonal, so it is its own inverse: the same function rotates and un-rotates.
 * A power-of-two head_dim is one block; any other is block-diagonal with the largest power-of-two
 * divisor as the block (head_dim 80 → 5 blocks of 16); an odd head_dim has no block above 1 and is refused.
 */
export interface HadamardPlan {
  readonly headDim: number;
  /** values per block, a power of two ≥ 2 dividing headDim */
  readonly block: number;
  /** headDim / block */
  readonly blocks: number;
}

/** The largest power of two dividing `headDim` (1 for an odd head_dim). */
export function hadamardBlockSize(headDim: number): number {
  if (!Number.isSafeInteger(headDim) || headDim < 1) return 1;
  return headDim & -headDim;
}

/**
 * The rotation for this head_dim, or a reason why there is none (the reason says what to do).
 */
export function planHadamard(headDim: number): HadamardPlan | { readonly refused: string } {
  const block = hadamardBlockSize(headDim);
  if (block < 2) {
    return {
      refused: `head_dim ${headDim} is odd, so it has no power-of-two block above 1: a Hadamard rotation would be the identity. ` +
        'Drop --rotate for this model.',
    };
  }
  return { headDim, block, blocks: headDim / block };
}

/** How the plan reads in messages and records: `one block of 64` or `block-diagonal, 5 blocks of 16`. */
export function describeHadamard(plan: HadamardPlan): string {
  return plan.blocks === 1 ? `one block of ${plan.block}` : `block-diagonal, ${plan.blocks} blocks of ${plan.block}`;
}

/**
 * Rotates `rows` rows of `plan.headDim` values from `input` into `output` (which may be `input`):
 * an in-register fast Walsh–Hadamard transform per block in float64, then one rounding to the
 * storage type (float32, or binary16 for float16 tensors, as a torch matmul in half precision would
 * store it). `scratch` holds one block (length ≥ plan.block).
 */
export function hadamardRotateRows(
  plan: HadamardPlan, input: Float32Array, output: Float32Array, rows: number, dtype: KvDtype, scratch: Float64Array = new Float64Array(plan.block),
): void {
  const { headDim, block } = plan;
  const scale = 1 / Math.sqrt(block);
  const half = dtype === 'float16';
  for (let row = 0; row < rows; row++) {
    for (let start = row * headDim, end = start + headDim; start < end; start += block) {
      for (let i = 0; i < block; i++) scratch[i] = input[start + i]!;
      // Sylvester order: butterflies of span 1, 2, 4, … (H_2k = [[H_k, H_k], [H_k, -H_k]]).
      for (let span = 1; span < block; span <<= 1) {
        for (let base = 0; base < block; base += span << 1) {
          for (let i = base; i < base + span; i++) {
            const a = scratch[i]!;
            const b = scratch[i + span]!;
            scratch[i] = a + b;
            scratch[i + span] = a - b;
          }
        }
      }
      for (let i = 0; i < block; i++) {
        const value = scratch[i]! * scale;
        output[start + i] = half ? roundToFloat16(value) : value;
      }
    }
  }
}
