import type { KvTensor } from '../../tensor/kv-tensor.js';
import { kvTensor } from '../../tensor/kv-tensor.js';
import { roundToFloat16 } from '../../tensor/float16.js';
import type { QuantizedTensor, QuantParams, Quantizer } from '../types.js';
import { QuantizationError } from '../../errors.js';
import { hqqGrid, paramShape } from './grid.js';
import type { HqqAxis, HqqGrid } from './grid.js';
import { runHqq } from './optimizer.js';
import type { EngineChoice, EngineName } from './optimizer.js';
import type { RunOrderChoice } from './optimize-wasm.js';
import { unpackCodes } from './bitpack.js';
import { dequantizeHqqInto } from './dequantize.js';
import { validateHqqParams } from './validate.js';

/**
 * Lets the optimizer split each step with a helper thread from a host-provided pool (Node:
 * app/node/wasm-thread-pool.ts `createWasmThreadPool(1)`); null goes back to one thread. The results
 * are the same bits either way (optimize-wasm.ts).
 */
export { setHqqThreadPool } from './kernels.js';

/**
 * The HQQ backend of transformers' `HQQQuantizedLayer` (spec §3.2, hqq 0.2.8.post1 semantics), as
 * called by transformers: `Quantizer.quantize(x, axis, nbits, group_size, compute_dtype=T,
 * optimize=True, round_zero=False, bitpack=True)`, then `Quantizer.cuda(...)` (casts scale and zero to
 * T) and `Quantizer.dequantize`. Numerics follow torch on CPU in float32 (spec §0.2): grouping,
 * initial parameters and the optimizer run in float32 whatever T is; T only shapes the stored
 * scale/zero and the dequantization.
 */
export interface HqqQuantizeOptions {
  /** optimizer engine; `auto` (default) prefers WebAssembly SIMD where the layout allows it */
  readonly engine?: EngineChoice;
  /** how the WebAssembly kernels order their work (optimize-wasm.ts); the same bits, so only tests pin it */
  readonly runOrder?: RunOrderChoice;
}

export interface HqqQuantizeResult {
  readonly tensor: QuantizedTensor;
  /** mean |W − W_r| of every optimizer step executed (the golden `optimizer_step_mean_abs_err`) */
  readonly stepErrors: readonly number[];
  readonly engine: EngineName;
}

export function quantizeHqq(x: KvTensor, params: QuantParams, options: HqqQuantizeOptions = {}): HqqQuantizeResult {
  const grid = validateHqqParams(x.shape, params);
  const result = runHqq(x.data, grid, params.nbits, options.engine ?? 'auto', options.runOrder);
  // meta["scale"] = 1.0 / scale (float32), then `to_inplace` casts scale and zero to T.
  const storage = x.dtype === 'float16' ? roundToFloat16 : Math.fround;
  const scale = new Float32Array(grid.groups);
  const zero = result.zero;
  for (let k = 0; k < grid.groups; k++) {
    scale[k] = storage(Math.fround(1 / result.inverseScale[k]!));
    zero[k] = storage(zero[k]!);
  }
  const tensor: QuantizedTensor = {
    backend: 'hqq',
    params: { nbits: params.nbits, axis: params.axis, groupSize: params.groupSize },
    shape: x.shape,
    dtype: x.dtype,
    gridShape: [grid.rows, grid.cols],
    packed: result.packed,
    paramShape: paramShape(grid),
    scale,
    zero,
  };
  return { tensor, stepErrors: result.stepErrors, engine: result.engine };
}

function gridOf(q: QuantizedTensor): HqqGrid {
  if (q.backend !== 'hqq') {
    throw new QuantizationError(`the HQQ quantizer cannot read a ${q.backend} tensor; dequantize it with the ${q.backend} quantizer.`);
  }
  const count = q.shape.reduce((a, b) => a * b, 1);
  return hqqGrid(count, q.params.groupSize, q.params.axis as HqqAxis);
}

function dequantizeInto(q: QuantizedTensor, out: Float32Array): void {
  dequantizeHqqInto({ grid: gridOf(q), nbits: q.params.nbits, dtype: q.dtype, packed: q.packed, scale: q.scale, zero: q.zero }, out);
}

export const hqqQuantizer: Quantizer = {
  backend: 'hqq',
  quantize(x: KvTensor, params: QuantParams): QuantizedTensor {
    return quantizeHqq(x, params).tensor;
  },
  dequantize(q: QuantizedTensor): KvTensor {
    const out = new Float32Array(gridOf(q).count);
    dequantizeInto(q, out);
    return kvTensor(q.shape, q.dtype, out);
  },
  dequantizeInto,
  unpackCodes(q: QuantizedTensor): Uint8Array {
    const grid = gridOf(q);
    return unpackCodes(q.packed, grid.rows, grid.cols, q.params.nbits);
  },
};
