import { roundToFloat16 } from '../../tensor/float16.js';
import { E2M1, E4M3, encodeMinifloat } from './minifloat.js';
import type { RuntimeFormat, TensorParams } from './types.js';

/**
 * NVFP4 (TensorRT-LLM, vLLM and SGLang on Blackwell): values as FP4 e2m1 in blocks of 16, each block
 * with an FP8 e4m3 scale, and one fp32 scale per tensor. The arithmetic follows TensorRT-LLM's
 * `cvt_warp_fp16_to_fp4` (cpp/tensorrt_llm/kernels/quantization.cuh), SFScaleVal being the per-tensor
 * "global scale" 448·6 / amax (ModelOpt's calibration: the tensor's amax maps to the largest e4m3
 * block scale times the largest e2m1 value):
 *   SFValue     = SFScaleVal · (vecMax · rcp(6))               → e4m3, round to nearest even, satfinite
 *   outputScale = rcp(float(e4m3) · rcp(SFScaleVal))           (0 when the block scale is 0)
 *   code        = e2m1(x · outputScale)                        (cvt.rn.satfinite.e2m1x2.f32)
 * and the value read back is e2m1 · float(e4m3) · s, s = amax / (448·6) the per-tensor dequantization scale. TensorRT-LLM's `rcp` is
 * `rcp.approx.ftz.f32`, within an ulp of the correctly rounded reciprocal used here.
 *
 * Layout of one head vector here: headDim/2 bytes of codes (value 2i in the low nibble, 2i+1 in the
 * high one, as cvt…e2m1x2 packs them), then headDim/16 e4m3 block-scale bytes. TensorRT-LLM keeps the
 * codes and the block scales in two pools, so a token costs 9/16 byte per value (4.5 bits) plus the
 * fp32 per-tensor scale per layer and side.
 */
const f = Math.fround;
const BLOCK = 16;
const RCP_SIX = f(1 / 6);
/** the per-tensor dequantization scale is amax / (448 · 6) */
export const NVFP4_GLOBAL_RANGE = 448 * 6;

export function nvfp4TensorScale(values: Float32Array): number {
  let amax = 0;
  for (let i = 0; i < values.length; i++) amax = Math.max(amax, Math.abs(values[i]!));
  return amax === 0 ? 1 : f(amax / NVFP4_GLOBAL_RANGE);
}

export const NVFP4: RuntimeFormat = {
  name: 'nvfp4',
  runtime: 'TensorRT-LLM, vLLM, SGLang',
  description: 'FP4 e2m1 values in blocks of 16, an FP8 e4m3 scale per block and an fp32 scale per tensor (4.5 bits/value)',
  source: 'TensorRT-LLM cpp/tensorrt_llm/kernels/quantization.cuh (cvt_warp_fp16_to_fp4)',
  tensorBytes: 4,
  tensorScale: 'calculated',
  refusal: (g) => (g.headDim % BLOCK === 0 ? null
    : `NVFP4 quantizes blocks of ${BLOCK} values along head_dim and head_dim ${g.headDim} is not a multiple of ${BLOCK}. Choose another format.`),
  rowBytes: (g) => g.headDim / 2 + g.headDim / BLOCK,
  tensorParams: (values): TensorParams => ({ tensorScale: nvfp4TensorScale(values) }),
  encodeRows(values, rows, g, params, out) {
    const global = f(1 / f(params.tensorScale)); // SFScaleVal
    const rcpGlobal = f(1 / global);
    const rowBytes = g.headDim / 2 + g.headDim / BLOCK;
    const blocks = g.headDim / BLOCK;
    for (let row = 0; row < rows; row++) {
      const x = row * g.headDim;
      const base = row * rowBytes;
      for (let b = 0; b < blocks; b++) {
        const at = x + b * BLOCK;
        let vecMax = 0;
        for (let j = 0; j < BLOCK; j++) vecMax = Math.max(vecMax, Math.abs(values[at + j]!));
        const sfValue = f(global * f(vecMax * RCP_SIX));
        const sfCode = encodeMinifloat(E4M3, sfValue);
        const narrow = E4M3.values[sfCode]!;
        const outputScale = sfValue !== 0 ? f(1 / f(narrow * rcpGlobal)) : 0;
        out[base + g.headDim / 2 + b] = sfCode;
        for (let j = 0; j < BLOCK; j += 2) {
          const lo = encodeMinifloat(E2M1, f(values[at + j]! * outputScale));
          const hi = encodeMinifloat(E2M1, f(values[at + j + 1]! * outputScale));
          out[base + (b * BLOCK + j) / 2] = lo | (hi << 4);
        }
      }
    }
  },
  decodeRows(bytes, rows, g, params, out) {
    const tensorScale = f(params.tensorScale);
    const rowBytes = g.headDim / 2 + g.headDim / BLOCK;
    const half = g.dtype === 'float16';
    for (let row = 0; row < rows; row++) {
      const base = row * rowBytes;
      for (let i = 0; i < g.headDim; i++) {
        const byte = bytes[base + (i >> 1)]!;
        const code = i & 1 ? byte >>> 4 : byte & 0x0f;
        // e2m1 · e4m3 is exact; one rounding after the per-tensor scale.
        const v = f(E2M1.values[code]! * E4M3.values[bytes[base + g.headDim / 2 + Math.floor(i / BLOCK)]!]! * tensorScale);
        out[row * g.headDim + i] = half ? roundToFloat16(v) : v;
      }
    }
  },
};
