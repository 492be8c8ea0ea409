import { roundToFloat16 } from '../../tensor/float16.js';
import type { KvDtype } from '../../tensor/kv-tensor.js';
import { E4M3, E5M2, encodeMinifloat, type MinifloatFormat } from './minifloat.js';
import type { RuntimeFormat } from './types.js';

/**
 * vLLM's and SGLang's FP8 KV cache (`--kv-cache-dtype fp8_e4m3 | fp8_e5m2`): one byte per value,
 * one fp32 scale per layer and side (`k_scale`, `v_scale`). vLLM's cache kernels
 * (csrc/cache_kernels.cu `reshape_and_cache_flash` → `fp8::scaled_convert`, in
 * csrc/quantization/w8a8/fp8/nvidia/quant_utils.cuh, formerly csrc/quantization/fp8/nvidia/quant_utils.cuh)
 * write `__nv_cvt_float_to_fp8(float(x) / scale, __NV_SATFINITE, type)` and read back
 * `half_to_float(fp8 → half) * scale` (then `float_to_half` for a float16 model).
 *
 * The scale is 1.0 unless calibrated: vLLM's `--calculate-kv-scales` sets it from the first batch
 * (vllm/attention/layer.py `calc_kv_scales`: `torch.abs(key).max() / self.k_range` with
 * K_SCALE_CONSTANT = 200 for keys and V_SCALE_CONSTANT = 100 for values, vllm/envs.py), computed in
 * the model's dtype: `tensorParams(…, calculate = true)`. A calibrated scale of 0 (an all-zero tensor)
 * divides to NaN, as in vLLM.
 */
const f = Math.fround;

export const K_SCALE_CONSTANT = 200;
export const V_SCALE_CONSTANT = 100;

/** vLLM's calc_kv_scales on these values: amax / constant, rounded to the model dtype, then held in fp32. */
export function calculatedKvScale(values: Float32Array, side: 'key' | 'value', dtype: KvDtype): number {
  let amax = 0;
  for (let i = 0; i < values.length; i++) {
    const a = Math.abs(values[i]!);
    if (a > amax || Number.isNaN(a)) amax = a;
  }
  const quotient = amax / (side === 'key' ? K_SCALE_CONSTANT : V_SCALE_CONSTANT);
  return dtype === 'float16' ? roundToFloat16(quotient) : f(quotient);
}

function fp8Format(minifloat: MinifloatFormat, name: string, maxValue: number): RuntimeFormat {
  return {
    name,
    runtime: 'vLLM, SGLang',
    description: `FP8 ${minifloat.name} (max ${maxValue}), one fp32 scale per layer and side (1.0, or --calculate-kv-scales)`,
    source: 'vLLM csrc/quantization/w8a8/fp8/nvidia/quant_utils.cuh (scaled_vec_conversion); vllm/attention/layer.py (calc_kv_scales)',
    tensorBytes: 4,
    tensorScale: 'default-or-calculated',
    refusal: () => null,
    rowBytes: (g) => g.headDim,
    tensorParams: (values, g, calculate) => ({ tensorScale: calculate ? calculatedKvScale(values, g.side, g.dtype) : 1 }),
    encodeRows(values, rows, g, params, out) {
      const scale = f(params.tensorScale);
      const n = rows * g.headDim;
      for (let i = 0; i < n; i++) out[i] = encodeMinifloat(minifloat, f(values[i]! / scale));
    },
    decodeRows(bytes, rows, g, params, out) {
      const scale = f(params.tensorScale);
      const table = minifloat.values;
      const n = rows * g.headDim;
      if (g.dtype === 'float16') for (let i = 0; i < n; i++) out[i] = roundToFloat16(f(table[bytes[i]!]! * scale));
      else for (let i = 0; i < n; i++) out[i] = f(table[bytes[i]!]! * scale);
    },
  };
}

export const VLLM_FP8_E4M3 = fp8Format(E4M3, 'vllm:fp8_e4m3', 448);
export const VLLM_FP8_E5M2 = fp8Format(E5M2, 'vllm:fp8_e5m2', 57344);
export const VLLM_FORMATS = [VLLM_FP8_E4M3, VLLM_FP8_E5M2] as const;
