import { CacheError } from '../errors.js';
import { hadamardRotateRows, planHadamard, type HadamardPlan } from '../quant/hadamard.js';
import { extractOutliers, restoreOutliers, type SparseOutliers } from '../quant/outliers.js';
import type { QuantParams, QuantizedTensor, Quantizer } from '../quant/types.js';
import { kvTensor, type KvTensor } from '../tensor/kv-tensor.js';
import type { SideExtensions } from './cache-extensions.js';
import type { EncodedSide, SideCodec } from './side-codec.js';

/**
 * The kvscope extensions' codec for one side of one layer (cache-extensions.ts), wrapped around the
 * backend's quantizer, in this order:
 * 1. **sink**: the first S rows of every slab are copied out exactly. They are never quantized, at
 *    the prefill or at any flush: a flush hands the whole history back, whose first S rows are the
 *    sink's exact values (or, while fewer than S tokens exist, exact residual rows).
 * 2. **rotation**: the dense rows are rotated along head_dim (hadamard.ts).
 * 3. **outliers**: the dense (rotated) rows' largest magnitudes go to a sparse list (outliers.ts).
 * 4. the backend quantizes what is left, with this side's params (its own nbits).
 * Decoding undoes it in reverse: dequantize, restore the outliers, rotate back, put the sink in front.
 * The caller measures the error on x against that decoding, so a rotated side's error statistics
 * are those of the unrotated tensor the model sees.
 */
export function extendedCodec(quantizer: Quantizer, params: QuantParams, extensions: SideExtensions): SideCodec {
  let scratch = new Float32Array(0);
  let rotationScratch = new Float64Array(0);
  let plan: HadamardPlan | null = null;

  const hadamard = (headDim: number): HadamardPlan => {
    if (plan !== null && plan.headDim === headDim) return plan;
    const planned = planHadamard(headDim);
    if ('refused' in planned) throw new CacheError(`--rotate hadamard (kvscope extension): ${planned.refused}`);
    plan = planned;
    rotationScratch = new Float64Array(planned.block);
    return planned;
  };

  return {
    encode(x: KvTensor): EncodedSide {
      const [batch, kvHeads, seq, headDim] = x.shape;
      const slabs = batch * kvHeads;
      const sinkTokens = Math.min(extensions.sinkTokens, seq);
      const denseSeq = seq - sinkTokens;
      const rotationPlan = extensions.rotation === null ? null : hadamard(headDim);
      const rotation = rotationPlan === null ? null : { kind: 'hadamard' as const, block: rotationPlan.block };
      const sink = sinkTokens > 0 ? copyRows(x.data, slabs, seq, 0, sinkTokens, headDim) : null;
      if (denseSeq === 0) return { tokens: seq, store: null, sinkTokens, sink, outliers: null, rotation };
      // x belongs to the caller (a graph output or the layer's history): transform a copy.
      let dense = sinkTokens > 0 ? copyRows(x.data, slabs, seq, sinkTokens, denseSeq, headDim) : x.data;
      if (rotationPlan !== null) {
        const rotated = dense === x.data ? new Float32Array(dense.length) : dense;
        hadamardRotateRows(rotationPlan, dense, rotated, slabs * denseSeq, x.dtype, rotationScratch);
        dense = rotated;
      }
      let outliers: SparseOutliers | null = null;
      if (extensions.outlierQuantile !== null) {
        if (dense === x.data) dense = dense.slice();
        outliers = extractOutliers(dense, extensions.outlierQuantile);
      }
      const store: QuantizedTensor = quantizer.quantize(kvTensor([batch, kvHeads, denseSeq, headDim], x.dtype, dense), params);
      return { tokens: seq, store, sinkTokens, sink, outliers, rotation };
    },

    decodeInto(encoded: EncodedSide, out: Float32Array): void {
      const store = encoded.store;
      const sinkTokens = encoded.sinkTokens;
      if (store === null) {
        if (encoded.sink !== null) out.set(encoded.sink);
        return;
      }
      const [batch, kvHeads, denseSeq, headDim] = store.shape;
      const slabs = batch * kvHeads;
      const count = slabs * denseSeq * headDim;
      // Without a sink the dense rows are the whole output, contiguous: decode in place.
      if (sinkTokens > 0 && scratch.length < count) scratch = new Float32Array(Math.max(count, 2 * scratch.length));
      const dense = sinkTokens > 0 ? scratch.subarray(0, count) : out.subarray(0, count);
      quantizer.dequantizeInto(store, dense);
      if (encoded.outliers !== null) restoreOutliers(encoded.outliers, dense);
      if (encoded.rotation !== null) hadamardRotateRows(hadamard(headDim), dense, dense, slabs * denseSeq, store.dtype, rotationScratch);
      if (sinkTokens === 0) return;
      const seq = sinkTokens + denseSeq;
      const sink = encoded.sink!;
      for (let s = 0; s < slabs; s++) {
        out.set(sink.subarray(s * sinkTokens * headDim, (s + 1) * sinkTokens * headDim), s * seq * headDim);
        out.set(dense.subarray(s * denseSeq * headDim, (s + 1) * denseSeq * headDim), (s * seq + sinkTokens) * headDim);
      }
    },
  };
}

/** Rows [from, from + rows) of every `[seq, width]` slab, as a new `[slabs, rows, width]` array. */
function copyRows(data: Float32Array, slabs: number, seq: number, from: number, rows: number, width: number): Float32Array {
  const out = new Float32Array(slabs * rows * width);
  for (let s = 0; s < slabs; s++) {
    const start = (s * seq + from) * width;
    out.set(data.subarray(start, start + rows * width), s * rows * width);
  }
  return out;
}
