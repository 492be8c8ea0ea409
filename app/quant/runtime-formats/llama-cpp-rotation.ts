/**
 * llama.cpp's Hadamard rotation of a quantized KV cache (PR #21038, on by default since April 2026;
 * `LLAMA_ATTN_ROT_DISABLE=1` turns it off). Read in src/llama-kv-cache.cpp:
 * - `attn_rot_k` holds when type_k is quantized and n_embd_head_k % 64 == 0 (`attn_rot_v` likewise);
 * - `build_input_k_rot`: keys use the largest power of two ≥ 64 dividing head_dim
 *   (`nrot = 64; do { nrot *= 2; } while (n_embd_head_k_all % nrot == 0); nrot /= 2;`);
 *   `build_input_v_rot`: values always use 64 ("using smaller rotation matrices for V seems beneficial");
 * - `ggml_gen_hadamard`: the Sylvester matrix with entries ±(float)(1.0 / sqrtf(n)), its own inverse;
 * - `ggml_mul_mat_aux`: each head vector is cut into rows of n values and each row multiplied by it,
 *   before the row is written (quantized) into the cache. src/llama-graph.cpp `build_attn` rotates
 *   q_cur and k_cur by self_k_rot, v_cur by self_v_rot, and the attention output by self_v_rot again,
 *   so attention sees H·deq(q(H·x)).
 * ggml computes that product as a float32 matrix multiply whose summation order is the backend's;
 * here the ± sum runs in float64 (a fast Walsh–Hadamard transform), is multiplied by the same float
 * entry and rounded once to float32: within an ulp or two of any backend, identical on every machine.
 */
const f = Math.fround;

/** The rotation size llama.cpp uses for this side and head_dim, or null where it does not rotate. */
export function llamaRotationSize(headDim: number, side: 'key' | 'value'): number | null {
  if (headDim <= 0 || headDim % 64 !== 0) return null;
  if (side === 'value') return 64;
  let n = 64;
  do n *= 2; while (headDim % n === 0);
  return n / 2;
}

/** Why `+rot` is not what llama.cpp would run at this head_dim, or null. */
export function llamaRotationRefusal(headDim: number, side: 'key' | 'value'): string | null {
  if (llamaRotationSize(headDim, side) !== null) return null;
  const field = side === 'key' ? 'n_embd_head_k' : 'n_embd_head_v';
  return `llama.cpp rotates a quantized ${side === 'key' ? 'K' : 'V'} cache only when ${field} % 64 == 0 ` +
    `(attn_rot_${side === 'key' ? 'k' : 'v'} in src/llama-kv-cache.cpp); at head_dim ${headDim} it stores the blocks unrotated. ` +
    'Drop "+rot" from the format: that is what llama.cpp runs for this model.';
}

/** The matrix entry magnitude `1.0 / sqrtf(n)` as ggml stores it (float). */
export function hadamardEntry(n: number): number {
  return f(1 / f(Math.sqrt(n)));
}

/**
 * Rotates `rows` rows of `headDim` values in place, in chunks of `n` (a power of two dividing headDim).
 * `scratch` holds n float64 values.
 */
export function rotateRows(values: Float32Array, rows: number, headDim: number, n: number, scratch: Float64Array): void {
  const entry = hadamardEntry(n);
  const total = rows * headDim;
  for (let start = 0; start < total; start += n) {
    for (let i = 0; i < n; i++) scratch[i] = values[start + i]!;
    for (let h = 1; h < n; h <<= 1) {
      for (let i = 0; i < n; i += h << 1) {
        for (let j = i; j < i + h; j++) {
          const a = scratch[j]!;
          const b = scratch[j + h]!;
          scratch[j] = a + b;
          scratch[j + h] = a - b;
        }
      }
    }
    for (let i = 0; i < n; i++) values[start + i] = f(scratch[i]! * entry);
  }
}
