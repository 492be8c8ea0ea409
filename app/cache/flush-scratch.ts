/**
 * The float32 working memory of a flush, shared by every layer of one cache. A flush re-quantizes
 * `dequant(store) ++ residual ++ new` of one side (spec §1.3) and measures the error against
 * `dequant(new store)`: two buffers of one side's history, needed only while that one side flushes.
 * Layers flush one after another, never at once, so one pair serves them all: the cache holds one
 * layer's K+V worth of history at most, instead of every layer's, which is what transformers holds
 * too (spec §3.6: the dequantized history of the layer being computed). Grows to the longest history;
 * never shrinks. The headroom `grow` reserves is not written until a flush needs it, and untouched
 * pages of a large buffer are not resident (measured: app/cache/kv-peak.ts).
 */
export class FlushScratch {
  #history: Float32Array = new Float32Array(0);
  #check: Float32Array = new Float32Array(0);

  /** `[0, count)` of the history buffer; valid until the next call of `history`. */
  history(count: number): Float32Array {
    if (this.#history.length < count) this.#history = new Float32Array(grow(this.#history.length, count));
    return this.#history.subarray(0, count);
  }

  /** `[0, count)` of the second buffer (dequant of the new store, for the event's error). */
  check(count: number): Float32Array {
    if (this.#check.length < count) this.#check = new Float32Array(grow(this.#check.length, count));
    return this.#check.subarray(0, count);
  }

  get capacityBytes(): number {
    return this.#history.byteLength + this.#check.byteLength;
  }

  dispose(): void {
    this.#history = new Float32Array(0);
    this.#check = new Float32Array(0);
  }
}

/** A little headroom, so a history growing by one residual cycle at a time does not reallocate every flush. */
function grow(current: number, needed: number): number {
  return Math.max(needed, Math.min(2 * current, Math.ceil(needed * 1.25)));
}
