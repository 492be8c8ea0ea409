import { errorStats, type ErrorStats } from '../quant/error-stats.js';
import type { QuantizedTensor } from '../quant/types.js';
import { kvTensor, type KvTensor } from '../tensor/kv-tensor.js';
import { shapeWithSeq, slabCount, type KvGeometry } from './kv-geometry.js';
import { checkConcatenation } from './concatenation.js';
import { SeqBuffer } from './seq-buffer.js';
import type { EncodedSide, SideCodec } from './side-codec.js';

/**
 * One of a `QuantizedLayer`'s two tensors, keys or values: the quantized store (`_quantized_keys`)
 * and the full-precision history `dequant(store) ++ residual` that every decode update returns
 * (spec §1.3). The residual's bookkeeping (1-D empty or 4-D, its length) is the layer's, because only
 * the key residual decides a flush.
 *
 * transformers dequantizes the whole store on every update. Between flushes that result never
 * changes, so kvscope dequantizes once per quantize call and keeps the history materialised: an
 * update appends the new tokens to it, which returns the same values as `torch.cat(dequant(Q), res, new)`.
 * The cost is one extra buffer: `#dequantized` holds `dequant(store)` from the quantize call until the
 * next update adopts it as the history, and the history buffer it replaces becomes the next spare.
 * A caller that has the update's result already (an ONNX graph's present output: KvConcatenation)
 * hands it to `extend`, and the history adopts it instead of moving every row up by one token;
 * `#dequantized` then stays the spare for good.
 *
 * What a quantize call stores is the codec's business (side-codec.ts): transformers' backend
 * quantizer alone, or with kvscope's extensions (sink rows, rotation, outliers) around it.
 */
export class QuantizedHistory {
  readonly #codec: SideCodec;
  readonly #geometry: KvGeometry;
  /** [batch, kvHeads, seq, headDim]: dequant(store) ++ residual, as last returned */
  readonly #history: SeqBuffer;
  #encoded: EncodedSide | null = null;
  /** tokens the last quantize call covered (sink rows included): the history's length right after it */
  #storeTokens = 0;
  /** [batch, kvHeads, storeTokens, headDim] = dequant(store) in its first elements, plus spare capacity */
  #dequantized: Float32Array = new Float32Array(0);
  /** set by a quantize call: `#history` still holds the quantized input, `#dequantized` the new store */
  #historyIsStale = false;

  constructor(codec: SideCodec, geometry: KvGeometry) {
    this.#codec = codec;
    this.#geometry = geometry;
    this.#history = new SeqBuffer(geometry);
  }

  /** the backend's quantized tensor of the dense rows (`_quantized_keys` on transformers' path) */
  get store(): QuantizedTensor | null {
    return this.#encoded?.store ?? null;
  }

  /** everything the last quantize call stored: the store, and the extensions' sink rows and outliers */
  get encoded(): EncodedSide | null {
    return this.#encoded;
  }

  get storeTokens(): number {
    return this.#storeTokens;
  }

  get workingBytes(): number {
    return this.#history.capacityBytes + this.#dequantized.byteLength;
  }

  /**
   * `_quantize(contiguous(x), axis)`: replaces the store and returns the error of this quantization
   * (x against dequant(store)). `x` is the prefill input or, on a flush, the full history.
   */
  quantize(x: KvTensor): ErrorStats {
    const encoded = this.#codec.encode(x);
    const count = x.data.length;
    if (this.#dequantized.length < count) {
      // Sized like the history it will become, so the adopting update does not grow it again.
      this.#dequantized = new Float32Array(Math.max(count, 2 * this.#dequantized.length, this.#history.capacityBytes / Float32Array.BYTES_PER_ELEMENT));
    }
    const dequantized = this.#dequantized.subarray(0, count);
    this.#codec.decodeInto(encoded, dequantized);
    this.#encoded = encoded;
    this.#storeTokens = x.shape[2];
    this.#historyIsStale = true;
    return errorStats(x.data, dequantized);
  }

  /**
   * `dequant(store)` as the last quantize call computed it, `[batch, kvHeads, storeTokens, headDim]`:
   * what attention sees at the step after a quantize event (spec §1.3). A view, valid until the next
   * `extend` (which adopts it as the history); null when no quantize call is pending adoption.
   */
  dequantizedStore(): KvTensor | null {
    if (!this.#historyIsStale) return null;
    const count = slabCount(this.#geometry) * this.#storeTokens * this.#geometry.headDim;
    return kvTensor(shapeWithSeq(this.#geometry, this.#storeTokens), this.#geometry.dtype, this.#dequantized.subarray(0, count));
  }

  /**
   * `torch.cat([dequant(store), residual, x], dim=-2)`; `x` joins the residual. With `concatenated`
   * (that very result, computed by the caller: see KvConcatenation) the history adopts it instead of
   * copying every row; `#dequantized` then stays this history's own spare for the next quantize call.
   * The caller has checked `concatenated` with `checkConcatenation` (QuantizedLayer.update does, for
   * keys and values both, before either is adopted).
   */
  extend(x: KvTensor, concatenated?: Float32Array): KvTensor {
    if (concatenated !== undefined) {
      this.#history.adoptConcatenation(concatenated, this.#currentSeq() + x.shape[2]);
      this.#historyIsStale = false;
      return this.#history.tensor();
    }
    if (this.#historyIsStale) {
      this.#dequantized = this.#history.adopt(this.#dequantized, this.#storeTokens);
      this.#historyIsStale = false;
    }
    this.#history.append(x.data, x.shape[2]);
    return this.#history.tensor();
  }

  /**
   * Throws CacheError unless `concatenated` can be what `extend(x)` is about to return
   * (KvConcatenation); `what` names the tensor in the message.
   */
  checkConcatenation(x: KvTensor, concatenated: Float32Array, what = 'key or value'): void {
    // What extend would start from: dequant(store) right after a quantize call, else the history.
    const current = this.#historyIsStale ? this.#dequantized : this.#history.view();
    checkConcatenation(this.#geometry, current, this.#currentSeq(), x, concatenated, what);
  }

  /** A flush: quantizes everything `extend` just returned, the dequantized old part included (spec §3.5). */
  requantize(): ErrorStats {
    return this.quantize(this.#history.tensor());
  }

  references(buffer: ArrayBufferLike): boolean {
    return this.#history.references(buffer) || (this.#dequantized.buffer === buffer && this.#dequantized.byteLength > 0);
  }

  #currentSeq(): number {
    return this.#historyIsStale ? this.#storeTokens : this.#history.seqLength;
  }

  dispose(): void {
    this.#history.dispose();
    this.#dequantized = new Float32Array(0);
    this.#encoded = null;
    this.#storeTokens = 0;
  }
}
