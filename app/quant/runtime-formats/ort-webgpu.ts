import { roundHalfEven } from './round-half-even.js';
import { NO_TENSOR_PARAMS, type RuntimeFormat } from './types.js';

/**
 * ONNX Runtime's WebGPU execution provider with `kvCacheQuantizationBits: 8` (ONNX Runtime GenAI's
 * provider option): symmetric int8 per head vector, as
 * onnxruntime/contrib_ops/webgpu/bert/kv_cache_block_quant_int8.wgsl.template computes it:
 *   quant_scale = max|x| / 127.0   (f32);   inv_scale = 1 / quant_scale, or 0 when quant_scale is 0
 *   q = i32(clamp(round(x · inv_scale), −127, 127))   (WGSL round: ties to even)
 * stored per head as one u32 holding the f32 scale's bits, then four int8 per little-endian u32:
 * 4 + head_dim bytes (onnxruntime-genai src/models/quantized_kv_cache.cpp
 * ComputeQuantizedKvCacheHeadSize: head_size / 4 + 1 words). The attention shaders read each int8 as
 * an exact value of the query's dtype (kv_cache_quantization_dequant.wgsl.template) and apply the
 * scale to the products, so a value is q · scale, given here as a float32 in any model dtype.
 * WGSL allows its division 2.5 ulp; this uses the correctly rounded one.
 */
const f = Math.fround;

/**
 * onnxruntime-genai's allocator refuses first, for 4 and 8 bits alike (the q8 kernel itself needs only
 * head_size % 4 == 0), in its words (src/models/quantized_kv_cache.cpp).
 */
export function ortKvRefusal(headDim: number): string | null {
  if (headDim >= 8 && (headDim & (headDim - 1)) === 0) return null;
  return `KV cache quantization requires head_size to be a power of 2 and >= 8, but got head_size=${headDim}. ` +
    '(ONNX Runtime GenAI refuses kvCacheQuantizationBits for this model.)';
}

export const ORT_WEBGPU_Q8: RuntimeFormat = {
  name: 'ort-webgpu:q8',
  runtime: 'ONNX Runtime (WebGPU EP)',
  description: 'symmetric int8, one fp32 scale per head vector (kvCacheQuantizationBits 8)',
  source: 'onnxruntime/contrib_ops/webgpu/bert/kv_cache_block_quant_int8.wgsl.template; kv_cache_quantization_dequant.wgsl.template',
  tensorBytes: 0,
  tensorScale: 'none',
  refusal: (g) => ortKvRefusal(g.headDim),
  rowBytes: (g) => 4 + g.headDim,
  tensorParams: () => NO_TENSOR_PARAMS,
  encodeRows(values, rows, g, _params, out) {
    const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
    const perRow = 4 + g.headDim;
    for (let row = 0; row < rows; row++) {
      const at = row * g.headDim;
      let amax = 0;
      for (let j = 0; j < g.headDim; j++) amax = Math.max(amax, Math.abs(values[at + j]!));
      const scale = f(amax / 127);
      const inv = scale > 0 ? f(1 / scale) : 0;
      view.setFloat32(row * perRow, scale, true);
      for (let j = 0; j < g.headDim; j++) {
        const q = Math.min(127, Math.max(-127, roundHalfEven(f(values[at + j]! * inv))));
        out[row * perRow + 4 + j] = q & 0xff;
      }
    }
  },
  decodeRows(bytes, rows, g, _params, out) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const perRow = 4 + g.headDim;
    for (let row = 0; row < rows; row++) {
      const scale = view.getFloat32(row * perRow, true);
      for (let j = 0; j < g.headDim; j++) out[row * g.headDim + j] = f(((bytes[row * perRow + 4 + j]! << 24) >> 24) * scale);
    }
  },
};
