import { roundToFloat16 } from '../../tensor/float16.js';
import { float32ToHalfBitsInto } from '../../tensor/float16-bits.js';
import { float16BitsToNumber } from '../../tensor/float16.js';
import { roundHalfEven } from './round-half-even.js';
import { NO_TENSOR_PARAMS, type FormatGeometry, type RuntimeFormat } from './types.js';

/**
 * MLX's affine quantization (`mx.quantize(x, group_size, bits)`), which mlx-lm's QuantizedKVCache
 * (`--kv-bits B --kv-group-size G`) applies to every K and V row along head_dim. Arithmetic as
 * mlx/backend/cpu/quantized.cpp `quantize` computes it, in float32 per group:
 *   scale = max((w_max − w_min) / (2^bits − 1), 1e-7), signed toward the larger-magnitude edge
 *   edge  = w_min if |w_min| > |w_max| else w_max;   q0 = rint(edge / scale)
 *   if q0 ≠ 0: scale = edge / q0, bias = edge   else bias = 0
 *   code  = clamp(rint((w − bias) / scale), 0, 2^bits − 1)
 * with the float32 scale and bias; they are then stored in the model's dtype, and mx.dequantize
 * (mlx/ops.cpp affine_dequantize) computes code · scale + bias in that dtype, each op rounded.
 * MLX's Metal kernel (mlx/backend/metal/kernels/quantized.h affine_quantize) rounds ties away from
 * zero (`round`) where the CPU rounds them to even (`rint`): only exact ties can differ.
 *
 * Packing (mlx/backend/common/quantized.h): bits 2, 4, 8 pack 32/bits codes per little-endian uint32,
 * code k at bit k·bits; bits 3 and 6 pack 8 (resp. 4) codes into 3 bytes the same way.
 * A head vector here is [packed codes | scales (groups × dtype) | biases (groups × dtype)].
 */
export const MLX_BITS = [2, 3, 4, 6, 8] as const;
export const MLX_GROUP_SIZES = [32, 64, 128] as const;

const f = Math.fround;
const EPS = f(1e-7);

function packing(bits: number): { perPack: number; packBytes: number } {
  if (bits === 3) return { perPack: 8, packBytes: 3 };
  if (bits === 6) return { perPack: 4, packBytes: 3 };
  return { perPack: 32 / bits, packBytes: 4 };
}

function dtypeBytes(g: FormatGeometry): number {
  return g.dtype === 'float16' ? 2 : 4;
}

/** mlx/ops.cpp's refusal, verbatim up to the shape. */
export function mlxRefusal(groupSize: number, headDim: number): string | null {
  if (headDim % groupSize === 0) return null;
  return `[quantize] The last dimension of the matrix needs to be divisible by the quantization group size ${groupSize}. ` +
    `However the provided  matrix has shape (…, ${headDim}). Choose --kv-group-size dividing head_dim ${headDim}.`;
}

function mlxFormat(bits: number, groupSize: number): RuntimeFormat {
  const bins = 2 ** bits - 1;
  const { perPack, packBytes } = packing(bits);
  const codeBytes = (g: FormatGeometry): number => (g.headDim * bits) / 8;
  const rowBytes = (g: FormatGeometry): number => codeBytes(g) + (2 * g.headDim / groupSize) * dtypeBytes(g);
  return {
    name: `mlx:${bits}bit-g${groupSize}`,
    runtime: 'MLX (mlx-lm)',
    description: `affine ${bits}-bit codes, a scale and a bias in the model's dtype per ${groupSize} values`,
    source: 'mlx/backend/cpu/quantized.cpp (quantize); mlx/ops.cpp (affine_dequantize)',
    tensorBytes: 0,
    tensorScale: 'none',
    refusal: (g) => mlxRefusal(groupSize, g.headDim),
    rowBytes,
    tensorParams: () => NO_TENSOR_PARAMS,
    encodeRows(values, rows, g, _params, out) {
      const groups = g.headDim / groupSize;
      const scales = new Float32Array(groups);
      const biases = new Float32Array(groups);
      const half = new Uint16Array(groups);
      const perRow = rowBytes(g);
      const codesAt = codeBytes(g);
      const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
      for (let row = 0; row < rows; row++) {
        const base = row * perRow;
        for (let group = 0; group < groups; group++) {
          const at = row * g.headDim + group * groupSize;
          let wMin = Infinity;
          let wMax = -Infinity;
          for (let j = 0; j < groupSize; j++) {
            const w = values[at + j]!;
            wMax = wMax < w ? w : wMax; // std::max(w_max, w)
            wMin = w < wMin ? w : wMin; // std::min(w_min, w)
          }
          const mask = Math.abs(wMin) > Math.abs(wMax);
          let scale = f(f(wMax - wMin) / bins);
          scale = scale < EPS ? EPS : scale;
          scale = mask ? scale : -scale;
          const edge = mask ? wMin : wMax;
          const q0 = roundHalfEven(f(edge / scale));
          let bias = 0;
          if (q0 !== 0) {
            scale = f(edge / q0);
            bias = edge;
          }
          scales[group] = scale;
          biases[group] = bias;
          // Codes, pack by pack; a pack never straddles a group (group sizes are multiples of 8 and 32/bits).
          for (let p = 0; p < groupSize / perPack; p++) {
            let word = 0;
            for (let k = 0; k < perPack; k++) {
              let q = roundHalfEven(f(f(values[at + p * perPack + k]! - bias) / scale));
              q = q < 0 ? 0 : q > bins ? bins : q;
              word |= q << (k * bits);
            }
            const byteAt = base + ((group * groupSize + p * perPack) * bits) / 8;
            for (let b = 0; b < packBytes; b++) out[byteAt + b] = (word >>> (8 * b)) & 0xff;
          }
        }
        if (g.dtype === 'float16') {
          float32ToHalfBitsInto(scales, 0, half, 0, groups);
          for (let i = 0; i < groups; i++) view.setUint16(base + codesAt + 2 * i, half[i]!, true);
          float32ToHalfBitsInto(biases, 0, half, 0, groups);
          for (let i = 0; i < groups; i++) view.setUint16(base + codesAt + 2 * groups + 2 * i, half[i]!, true);
        } else {
          for (let i = 0; i < groups; i++) view.setFloat32(base + codesAt + 4 * i, scales[i]!, true);
          for (let i = 0; i < groups; i++) view.setFloat32(base + codesAt + 4 * groups + 4 * i, biases[i]!, true);
        }
      }
    },
    decodeRows(bytes, rows, g, _params, out) {
      const groups = g.headDim / groupSize;
      const perRow = rowBytes(g);
      const codesAt = codeBytes(g);
      const half = g.dtype === 'float16';
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let row = 0; row < rows; row++) {
        const base = row * perRow;
        for (let group = 0; group < groups; group++) {
          const scale = half ? float16BitsToNumber(view.getUint16(base + codesAt + 2 * group, true)) : view.getFloat32(base + codesAt + 4 * group, true);
          const bias = half ? float16BitsToNumber(view.getUint16(base + codesAt + 2 * groups + 2 * group, true)) : view.getFloat32(base + codesAt + 4 * groups + 4 * group, true);
          for (let p = 0; p < groupSize / perPack; p++) {
            const byteAt = base + ((group * groupSize + p * perPack) * bits) / 8;
            let word = 0;
            for (let b = 0; b < packBytes; b++) word |= bytes[byteAt + b]! << (8 * b);
            for (let k = 0; k < perPack; k++) {
              const q = (word >>> (k * bits)) & bins;
              // code · scale is exact in a double; each dtype op rounds once
              out[row * g.headDim + group * groupSize + p * perPack + k] = half
                ? roundToFloat16(roundToFloat16(q * scale) + bias)
                : f(f(q * scale) + bias);
            }
          }
        }
      }
    },
  };
}

export const MLX_FORMATS: readonly RuntimeFormat[] = MLX_BITS.flatMap((bits) => MLX_GROUP_SIZES.map((group) => mlxFormat(bits, group)));
