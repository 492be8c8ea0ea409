import { copySlabRows, type SlabArray } from './slab-rows.js';

/**
 * A growable `[slabs, seq, width]` history in the graph's own element type, whose live part is one
 * contiguous `[batch, kvHeads, seq, headDim]` tensor that can be fed as a past input without a copy.
 * The fp16 twin of app/cache/seq-buffer.ts (which holds float32 values): capacity doubles, and
 * between growths an append moves the slabs up in place, as `torch.cat(..., dim=-2)` would copy them.
 */
export class SlabHistory<T extends SlabArray> {
  readonly #create: (length: number) => T;
  readonly #slabs: number;
  readonly #width: number;
  #data: T;
  #seq = 0;

  constructor(create: (length: number) => T, slabs: number, width: number) {
    this.#create = create;
    this.#slabs = slabs;
    this.#width = width;
    this.#data = create(0);
  }

  get seqLength(): number {
    return this.#seq;
  }

  get capacityBytes(): number {
    return this.#data.byteLength;
  }

  /** The live `[slabs, seq, width]` elements (a view, valid until the next append or reset). */
  view(): T {
    return this.#data.subarray(0, this.#slabs * this.#seq * this.#width) as T;
  }

  /** Appends rows `[srcStart, srcStart + rows)` of every slab of `src` (seq length `srcSeq`). */
  appendRows(src: T, srcSeq: number, srcStart: number, rows: number): void {
    const width = this.#width;
    const oldSeq = this.#seq;
    const newSeq = oldSeq + rows;
    const needed = this.#slabs * newSeq * width;
    if (needed > this.#data.length) {
      const grown = this.#create(Math.max(needed, 2 * this.#data.length));
      copySlabRows(this.#data, oldSeq, 0, grown, newSeq, 0, oldSeq, this.#slabs, width);
      this.#data = grown;
    } else {
      // Highest slab first: each moves up onto space no unmoved slab occupies.
      for (let s = this.#slabs - 1; s > 0; s--) this.#data.copyWithin(s * newSeq * width, s * oldSeq * width, (s + 1) * oldSeq * width);
    }
    copySlabRows(src, srcSeq, srcStart, this.#data, newSeq, oldSeq, rows, this.#slabs, width);
    this.#seq = newSeq;
  }

  /** Empties the history to `seq` rows and returns their storage to be written (`[slabs, seq, width]`). */
  reset(seq: number): T {
    const needed = this.#slabs * seq * this.#width;
    if (needed > this.#data.length) this.#data = this.#create(Math.max(needed, 2 * this.#data.length));
    this.#seq = seq;
    return this.view();
  }

  dispose(): void {
    this.#data = this.#create(0);
    this.#seq = 0;
  }
}
