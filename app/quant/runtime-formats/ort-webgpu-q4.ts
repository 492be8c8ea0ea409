import { NO_TENSOR_PARAMS, type RuntimeFormat } from './types.js';
import { ortKvRefusal } from './ort-webgpu.js';

/**
 * ONNX Runtime's WebGPU execution provider with `kvCacheQuantizationBits: 4` ("TurboQuant", its
 * PR #28059): each head vector is rotated by a normalized Walsh–Hadamard transform, divided by its L2
 * norm, and each coordinate snapped to one of 16 fixed centroids; the norm is kept as an fp32 word.
 * As onnxruntime/contrib_ops/webgpu/bert/turbo_quant_hadamard.wgsl.template computes it, in f32:
 * - `wht_butterfly` (hadamard_transform_common.wgsl.template): stages h = 1, 2, 4, …, each (a + b, a − b)
 *   rounded to f32, then every value times 1 / sqrt(head_size);
 * - the squared norm summed per thread over a stride of the workgroup (64 threads: the size of its
 *   `scale_reduction_buffer`), then by a tree reduction; quant_scale = sqrt(sum), inverse 1 / quant_scale;
 * - index = the number of the 15 decision boundaries at or below x / quant_scale (turbo_quant_common's
 *   `searchsorted_tq`; the boundaries are the centroids' midpoints).
 * Stored per head: [scale f32 | head_size 4-bit indices, 8 per little-endian u32, low nibble first]:
 * 4 + head_size / 2 bytes. Attention reads C[index] · quant_scale in the rotated basis (queries
 * rotated, outputs rotated back); decodeRows returns that, rotated back by the same transform.
 * WGSL may fuse or reorder what this emulates in f32 and allows its division 2.5 ulp; the stored
 * template version calls the index search `snap_to_centroid_index`, whose definition in the stored
 * common template is `searchsorted_tq` (the nearest centroid, ties up).
 */
export const TQ_CENTROIDS = Float32Array.from([
  -0.2377, -0.1809, -0.1419, -0.1104, -0.0829, -0.0578, -0.0342, -0.0113,
  0.0113, 0.0342, 0.0578, 0.0829, 0.1104, 0.1419, 0.1809, 0.2377,
]);
export const TQ_BOUNDARIES = Float32Array.from([
  -0.2093, -0.1614, -0.1261, -0.0966, -0.0704, -0.0460, -0.0227,
  0.0, 0.0227, 0.0460, 0.0704, 0.0966, 0.1261, 0.1614, 0.2093,
]);

const f = Math.fround;
const WORKGROUP = 64;

/** searchsorted_tq: binary search over the 15 boundaries, val ≥ boundary going up. */
export function turboQuantIndex(value: number): number {
  let lo = 0;
  let hi = 15;
  for (let iter = 0; iter < 4; iter++) {
    const mid = (lo + hi) >> 1;
    if (value >= TQ_BOUNDARIES[mid]!) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The shader's f32 Walsh–Hadamard butterfly and normalization, in place on `x[at…at+n)`. */
export function whtF32(x: Float32Array, at: number, n: number): void {
  for (let half = 1; half < n; half <<= 1) {
    for (let block = 0; block < n; block += half << 1) {
      for (let i = block; i < block + half; i++) {
        const a = x[at + i]!;
        const b = x[at + i + half]!;
        x[at + i] = a + b; // a Float32Array store rounds to f32
        x[at + i + half] = a - b;
      }
    }
  }
  const norm = f(1 / f(Math.sqrt(n)));
  for (let i = 0; i < n; i++) x[at + i] = f(x[at + i]! * norm);
}

/** The shader's sum of squares: per-thread strided partial sums, then a tree over 64 threads. */
function sumOfSquaresF32(x: Float32Array, at: number, n: number, partial: Float32Array): number {
  for (let lid = 0; lid < WORKGROUP; lid++) {
    let sum = 0;
    for (let i = lid; i < n; i += WORKGROUP) sum = f(sum + f(x[at + i]! * x[at + i]!));
    partial[lid] = sum;
  }
  for (let stride = WORKGROUP >> 1; stride > 0; stride >>= 1) {
    for (let lid = 0; lid < stride; lid++) partial[lid] = partial[lid]! + partial[lid + stride]!;
  }
  return partial[0]!;
}

export const ORT_WEBGPU_Q4: RuntimeFormat = {
  name: 'ort-webgpu:q4',
  runtime: 'ONNX Runtime (WebGPU EP)',
  description: 'Hadamard-rotated 4-bit centroid indices, one fp32 L2 norm per head vector (kvCacheQuantizationBits 4, TurboQuant)',
  source: 'onnxruntime/contrib_ops/webgpu/bert/turbo_quant_hadamard.wgsl.template; turbo_quant_common.wgsl.template',
  tensorBytes: 0,
  tensorScale: 'none',
  refusal: (g) => ortKvRefusal(g.headDim),
  rowBytes: (g) => 4 + g.headDim / 2,
  tensorParams: () => NO_TENSOR_PARAMS,
  encodeRows(values, rows, g, _params, out) {
    const n = g.headDim;
    const rotated = new Float32Array(n);
    const partial = new Float32Array(WORKGROUP);
    const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
    const perRow = 4 + n / 2;
    for (let row = 0; row < rows; row++) {
      rotated.set(values.subarray(row * n, row * n + n));
      whtF32(rotated, 0, n);
      const scale = f(Math.sqrt(sumOfSquaresF32(rotated, 0, n, partial)));
      const inv = scale > 0 ? f(1 / scale) : 0;
      view.setFloat32(row * perRow, scale, true);
      for (let i = 0; i < n; i += 2) {
        const lo = turboQuantIndex(f(rotated[i]! * inv));
        const hi = turboQuantIndex(f(rotated[i + 1]! * inv));
        out[row * perRow + 4 + i / 2] = lo | (hi << 4);
      }
    }
  },
  decodeRows(bytes, rows, g, _params, out) {
    const n = g.headDim;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const perRow = 4 + n / 2;
    for (let row = 0; row < rows; row++) {
      const scale = view.getFloat32(row * perRow, true);
      for (let i = 0; i < n; i++) {
        const byte = bytes[row * perRow + 4 + (i >> 1)]!;
        out[row * n + i] = f(TQ_CENTROIDS[i & 1 ? byte >>> 4 : byte & 15]! * scale);
      }
      whtF32(out, row * n, n);
    }
  },
};
