import type { QuantizedTensor } from '../quant/types.js';
import type { KvDtype, KvShape } from '../tensor/kv-tensor.js';
import type { RowStorage } from './residual-rows.js';

/**
 * What a quantized layer stores for its keys or values, read-only, as transformers' `QuantizedLayer`
 * holds it (spec §1.3, §3.6): the quantized store (`_quantized_keys`: packed codes, scale, zero) and
 * the full-precision residual (`self.keys`), nothing dequantized. The in-graph path feeds exactly
 * these to the graph (app/engine/graph-kv-lane.ts).
 */
export interface StoredKvPart {
  /** null before the prefill */
  readonly store: QuantizedTensor | null;
  readonly storeTokens: number;
  /** `[batch·kvHeads, residualTokens, headDim]` in T: float32 values, or binary16 bits for float16 (a view) */
  readonly residual: RowStorage;
  readonly residualTokens: number;
  /** bumped by every quantize call (prefill, flush): a reader caching anything derived from `store` checks it */
  readonly storeVersion: number;
}

/**
 * New rows handed to a layer that stores them as they come: `[batch, kvHeads, tokens, headDim]`,
 * float32 values, or binary16 bits for a float16 cache (what a graph's new-rows output holds).
 */
export interface KvRows {
  readonly shape: KvShape;
  readonly dtype: KvDtype;
  readonly data: RowStorage;
}
