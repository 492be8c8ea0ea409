import { kvTensor, type KvTensor } from '../tensor/kv-tensor.js';
import { shapeWithSeq, slabCount, type KvGeometry } from './kv-geometry.js';

/**
 * A growable `[slabs, seq, width]` buffer (slabs = batch·kvHeads, width = headDim) whose live part is
 * always one contiguous row-major `[batch, kvHeads, seq, headDim]` tensor, so it can be handed out as
 * a view (STYLE.md §5). This is what `torch.cat(..., dim=-2)` produces in transformers (spec §1.3),
 * without a fresh allocation per decode step: capacity doubles, and between growths an append moves
 * the slabs up in place (the same O(total) copy `torch.cat` does, minus the allocation).
 *
 * A view returned by `view()` or `tensor()` stays valid until the next `append`, `adopt`,
 * `adoptConcatenation` or `dispose`.
 */
export class SeqBuffer {
  readonly #geometry: KvGeometry;
  readonly #slabs: number;
  readonly #width: number;
  /** [slabs, seq, width] in the first `slabs·seq·width` elements; the rest is spare capacity */
  #data: Float32Array = new Float32Array(0);
  #seq = 0;
  /** `#data` is a caller's array taken by `adoptConcatenation`: never written to, never handed out */
  #borrowed = false;

  constructor(geometry: KvGeometry) {
    this.#geometry = geometry;
    this.#slabs = slabCount(geometry);
    this.#width = geometry.headDim;
  }

  get seqLength(): number {
    return this.#seq;
  }

  /** Bytes of JavaScript memory held, live part and spare capacity. */
  get capacityBytes(): number {
    return this.#data.byteLength;
  }

  /** The live `[slabs, seq, width]` values. */
  view(): Float32Array {
    return this.#data.subarray(0, this.#slabs * this.#seq * this.#width);
  }

  /** The live part as a `[batch, kvHeads, seq, headDim]` tensor (a view). */
  tensor(): KvTensor {
    return kvTensor(shapeWithSeq(this.#geometry, this.#seq), this.#geometry.dtype, this.view());
  }

  /** Appends `[slabs, tokens, width]` values along seq: every slab grows by `tokens` rows. */
  append(values: Float32Array, tokens: number): void {
    const width = this.#width;
    const oldSeq = this.#seq;
    const newSeq = oldSeq + tokens;
    const oldSlab = oldSeq * width;
    const newSlab = newSeq * width;
    const addSlab = tokens * width;
    const needed = this.#slabs * newSlab;
    if (needed > this.#data.length || this.#borrowed) {
      // Amortized doubling: a decode loop reallocates O(log steps) times.
      const grown = new Float32Array(Math.max(needed, 2 * this.#data.length));
      for (let i = 0; i < this.#slabs; i++) grown.set(this.#data.subarray(i * oldSlab, (i + 1) * oldSlab), i * newSlab);
      this.#data = grown;
      this.#borrowed = false;
    } else {
      // Highest slab first: each slab moves up, never onto a slab that has not moved yet.
      for (let i = this.#slabs - 1; i > 0; i--) this.#data.copyWithin(i * newSlab, i * oldSlab, (i + 1) * oldSlab);
    }
    for (let i = 0; i < this.#slabs; i++) {
      this.#data.set(values.subarray(i * addSlab, (i + 1) * addSlab), i * newSlab + oldSlab);
    }
    this.#seq = newSeq;
  }

  /**
   * A zero-copy hand-over: the caller gives up `storage`, whose first `slabs·seq·width` elements
   * already hold the contents, and receives the buffer this one held so it can be reused.
   */
  adopt(storage: Float32Array, seq: number): Float32Array {
    if (storage.length < this.#slabs * seq * this.#width) {
      throw new RangeError(`storage of ${storage.length} values cannot hold [${this.#slabs}, ${seq}, ${this.#width}]`);
    }
    // A borrowed array is not ours to reuse: hand back nothing instead.
    const previous = this.#borrowed ? new Float32Array(0) : this.#data;
    this.#data = storage;
    this.#seq = seq;
    this.#borrowed = false;
    return previous;
  }

  /**
   * An append the caller has already done: `concatenated` is exactly the new live part,
   * `[slabs, seq, width]` (e.g. a graph's present output, which is its past followed by the new
   * rows). Taken without a copy and never written to: the next `append` reallocates, and `adopt`
   * does not hand it out for reuse. The caller vouches for the contents (see KvConcatenation).
   */
  adoptConcatenation(concatenated: Float32Array, seq: number): void {
    if (concatenated.length !== this.#slabs * seq * this.#width) {
      throw new RangeError(`a concatenation of ${concatenated.length} values is not [${this.#slabs}, ${seq}, ${this.#width}]`);
    }
    this.#data = concatenated;
    this.#seq = seq;
    this.#borrowed = true;
  }

  /** Whether the live part or spare capacity is `buffer` (an adopted concatenation included). */
  references(buffer: ArrayBufferLike): boolean {
    return this.#data.buffer === buffer && this.#data.byteLength > 0;
  }

  dispose(): void {
    this.#data = new Float32Array(0);
    this.#seq = 0;
    this.#borrowed = false;
  }
}
