import type { SparseOutliers } from '../quant/outliers.js';
import type { QuantParams, QuantizedTensor, Quantizer } from '../quant/types.js';
import type { KvTensor } from '../tensor/kv-tensor.js';

/**
 * How one side (keys or values) of a quantized layer is stored after a quantize call: the seam where
 * kvscope's extensions bend the cache (cache-extensions.ts) while `QuantizedHistory` keeps
 * transformers' flush logic. transformers' own codec is `backendCodec`: `_quantize` and
 * `_dequantize` of the backend and nothing else.
 *
 * The representation stays explicit for consumers that read codes directly (in-graph dequantization):
 * the dense rows are one backend `QuantizedTensor`, in the domain named by `rotation`; the sink rows
 * and the outliers are plain full-precision values beside it.
 */
export interface EncodedSide {
  /** sequence length covered: sink rows + dense rows */
  readonly tokens: number;
  /** rows [sinkTokens, tokens) of every slab, quantized by the backend; null when every row is a sink row */
  readonly store: QuantizedTensor | null;
  readonly sinkTokens: number;
  /** [batch·kvHeads, sinkTokens, headDim] exact values in T; null without sink rows */
  readonly sink: Float32Array | null;
  /** the dense rows' outliers, positions in the store's flat [B, H, tokens − sinkTokens, D] tensor; null when off */
  readonly outliers: SparseOutliers | null;
  /** the store holds codes of the rotated rows (hadamard.ts); null: the rows themselves */
  readonly rotation: { readonly kind: 'hadamard'; readonly block: number } | null;
}

export interface SideCodec {
  /** `_quantize(x)` with the extensions applied; `x` is the prefill input or, at a flush, the whole history */
  encode(x: KvTensor): EncodedSide;
  /** `_dequantize` of everything `encode` covered, into `out` (length = B·H·tokens·D), without allocating where it can */
  decodeInto(encoded: EncodedSide, out: Float32Array): void;
}

/** transformers' path: the backend's quantizer on the whole tensor (spec §1.5). */
export function backendCodec(quantizer: Quantizer, params: QuantParams): SideCodec {
  return {
    encode: (x) => ({ tokens: x.shape[2], store: quantizer.quantize(x, params), sinkTokens: 0, sink: null, outliers: null, rotation: null }),
    decodeInto: (encoded, out) => {
      if (encoded.store !== null) quantizer.dequantizeInto(encoded.store, out);
    },
  };
}
