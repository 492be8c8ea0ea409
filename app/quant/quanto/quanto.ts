import { QuantizationError } from '../../errors.js';
import { kvTensor, type KvDtype, type KvTensor } from '../../tensor/kv-tensor.js';
import type { QuantParams, QuantizedTensor, Quantizer } from '../types.js';
import { groupLayout, paramCount, type GroupLayout } from './grouping.js';
import { roundToFloat16 } from '../../tensor/float16.js';
import type { RoundToDtype } from './max-optimizer.js';
import { throwNonFiniteInput } from './non-finite.js';
import { packedRowCount, unpackWeights } from './packing.js';
import { validateQuantoParams, type QuantoParams } from './params.js';
import type { QuantoCodes } from './quanto-codes.js';
import { dequantizeColumnsScalar, dequantizeRowsScalar, dequantTable } from './scalar-dequantize.js';
import { quantizeColumnsScalar, quantizeRowsScalar } from './scalar-quantize.js';
import { simdKernels } from './wasm/simd-runtime.js';

/**
 * The optimum-quanto KV quantizer behind `QuantoQuantizedLayer` (spec §1.5, §3.1):
 * `MaxOptimizer()(x, qtype, axis, g)` then `quantize_weight(...)`, and `.dequantize()`.
 *
 * Two implementations give identical bits: plain typed-array kernels (every layout) and WebAssembly
 * SIMD kernels (whose f32x4 add/div/mul/sub are exactly IEEE binary32 with ties-to-even, i.e. torch's
 * CPU float32 arithmetic; float16 rounds each result to half on top). The SIMD kernels are used when
 * the runtime has WebAssembly SIMD and the layout suits them; otherwise the plain kernels run.
 */
export const quantoQuantizer: Quantizer = {
  backend: 'quanto',

  quantize(x: KvTensor, params: QuantParams): QuantizedTensor {
    const checked = validateQuantoParams(params);
    const layout = groupLayout(x.shape, checked.axis, checked.groupSize);
    const codes = quantizeCodes(x, layout, checked);
    return {
      backend: 'quanto',
      params: checked,
      shape: x.shape,
      dtype: x.dtype,
      gridShape: [layout.rows, layout.cols],
      packed: codes.packed,
      paramShape: layout.paramShape,
      scale: codes.scale,
      zero: codes.shift,
    };
  },

  dequantize(q: QuantizedTensor): KvTensor {
    const out = new Float32Array(q.shape[0] * q.shape[1] * q.shape[2] * q.shape[3]);
    quantoQuantizer.dequantizeInto(q, out); // not `this`: callers may pass the method around unbound
    return kvTensor(q.shape, q.dtype, out);
  },

  dequantizeInto(q: QuantizedTensor, out: Float32Array): void {
    const { params, layout } = checkQuantized(q);
    if (out.length !== layout.elementCount) {
      throw new QuantizationError(
        `dequantizeInto needs an output of ${layout.elementCount} values for shape [${q.shape.join(', ')}], got ${out.length}.`,
      );
    }
    const simd = simdKernels();
    if (simd !== null && simd.supports(layout)) {
      simd.dequantize(q.packed, q.scale, q.zero, q.dtype, layout, params.nbits, out);
      return;
    }
    const table = dequantTable(q.scale, q.zero, params.nbits, rounderOf(q.dtype));
    if (layout.paramsPerColumn) dequantizeColumnsScalar(q.packed, table, layout, params.nbits, out);
    else dequantizeRowsScalar(q.packed, table, layout, params.nbits, out);
  },

  unpackCodes(q: QuantizedTensor): Uint8Array {
    const { params, layout } = checkQuantized(q);
    return unpackWeights(q.packed, layout.rows, layout.cols, params.nbits);
  },
};

function quantizeCodes(x: KvTensor, layout: GroupLayout, params: QuantoParams): QuantoCodes {
  const simd = simdKernels();
  let codes: QuantoCodes | null;
  if (simd !== null && simd.supports(layout)) {
    codes = simd.quantize(x.data, x.dtype, layout, params.nbits);
  } else {
    const round = rounderOf(x.dtype);
    codes = layout.paramsPerColumn
      ? quantizeColumnsScalar(x.data, layout, params.nbits, round)
      : quantizeRowsScalar(x.data, layout, params.nbits, round);
  }
  if (codes === null) throwNonFiniteInput(x.data, x.shape);
  return codes;
}

/** torch computes in the tensor dtype and rounds after every elementwise op (spec §3.4). */
function rounderOf(dtype: KvDtype): RoundToDtype {
  return dtype === 'float16' ? roundToFloat16 : Math.fround;
}

/** A quantized tensor handed back to us must be a quanto one whose arrays match its own layout. */
function checkQuantized(q: QuantizedTensor): { params: QuantoParams; layout: GroupLayout } {
  if (q.backend !== 'quanto') {
    throw new QuantizationError(`the quanto quantizer cannot dequantize a tensor made by the ${q.backend} backend; use that backend's quantizer.`);
  }
  const params = validateQuantoParams(q.params);
  const layout = groupLayout(q.shape, params.axis, params.groupSize);
  const packedBytes = packedRowCount(layout.rows, params.nbits) * layout.cols;
  const groups = paramCount(layout);
  if (q.packed.length !== packedBytes || q.scale.length !== groups || q.zero.length !== groups) {
    throw new QuantizationError(
      `quanto tensor of shape [${q.shape.join(', ')}] (nbits ${params.nbits}, axis ${params.axis}, group ${params.groupSize}) ` +
        `needs ${packedBytes} packed bytes and ${groups} scales and shifts; it has ${q.packed.length}, ${q.scale.length} and ${q.zero.length}. ` +
        'It was changed or built by hand; quantize the tensor again.',
    );
  }
  return { params, layout };
}
