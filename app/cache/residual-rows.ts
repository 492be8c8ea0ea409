import { halfBitsToFloat32Into } from '../tensor/float16-bits.js';
import type { KvDtype } from '../tensor/kv-tensor.js';

/** float32 values, or IEEE binary16 bit patterns for a float16 cache (as onnxruntime holds fp16). */
export type RowStorage = Float32Array | Uint16Array;

/**
 * The capacity, in rows, a residual grows to when it holds `current` rows' room and must take
 * `needed`: doubling, or straight to `needed` when that is more. ResidualRows grows by it, and the
 * memory what-if (kv-peak.ts residualBufferRows) follows it to size the residual buffers.
 */
export function grownResidualRows(current: number, needed: number): number {
  return Math.max(needed, 2 * current);
}

/**
 * A quantized layer's full-precision residual as transformers stores it: the rows since the last
 * quantize call, `[slabs, tokens, width]` (slabs = batch·kvHeads, width = headDim), in the model's
 * dtype T: float32 values, or binary16 bits for float16, the very bits a graph returns and is fed,
 * so a float16 residual takes 2 bytes a value and crosses to and from ONNX Runtime without conversion.
 * Capacity doubles; between growths an append moves the slabs up in place (SeqBuffer's scheme).
 */
export class ResidualRows {
  readonly dtype: KvDtype;
  readonly #slabs: number;
  readonly #width: number;
  #data: RowStorage;
  #tokens = 0;

  constructor(dtype: KvDtype, slabs: number, width: number) {
    this.dtype = dtype;
    this.#slabs = slabs;
    this.#width = width;
    this.#data = dtype === 'float16' ? new Uint16Array(0) : new Float32Array(0);
  }

  get tokens(): number {
    return this.#tokens;
  }

  /** JavaScript bytes held, live rows and spare capacity. */
  get capacityBytes(): number {
    return this.#data.byteLength;
  }

  /** The live rows, `[slabs, tokens, width]` in T's storage (a view, valid until the next append or clear). */
  view(): RowStorage {
    return this.#data.subarray(0, this.#slabs * this.#tokens * this.#width);
  }

  /** Appends `[slabs, tokens, width]` rows given in T's storage (float32, or binary16 bits for float16). */
  append(rows: RowStorage, tokens: number): void {
    if ((rows instanceof Uint16Array) !== (this.dtype === 'float16')) {
      throw new TypeError(`a ${this.dtype} residual takes ${this.dtype === 'float16' ? 'binary16 bits (Uint16Array)' : 'a Float32Array'}`);
    }
    const width = this.#width;
    const oldSlab = this.#tokens * width;
    const newSlab = (this.#tokens + tokens) * width;
    const addSlab = tokens * width;
    const needed = this.#slabs * newSlab;
    if (needed > this.#data.length) {
      const values = grownResidualRows(this.#data.length / (this.#slabs * width), this.#tokens + tokens) * this.#slabs * width;
      const grown = this.dtype === 'float16' ? new Uint16Array(values) : new Float32Array(values);
      for (let s = 0; s < this.#slabs; s++) grown.set(this.#data.subarray(s * oldSlab, (s + 1) * oldSlab), s * newSlab);
      this.#data = grown;
    } else {
      // Highest slab first: each slab moves up, never onto a slab that has not moved yet.
      for (let s = this.#slabs - 1; s > 0; s--) this.#data.copyWithin(s * newSlab, s * oldSlab, (s + 1) * oldSlab);
    }
    for (let s = 0; s < this.#slabs; s++) this.#data.set(rows.subarray(s * addSlab, (s + 1) * addSlab), s * newSlab + oldSlab);
    this.#tokens += tokens;
  }

  /**
   * Writes slab s's rows as float32 into `out` at `out[s·stride + offset …]`, for every slab: how a
   * flush lays the residual into `[slabs, seq, width]` history at token `offset / width`.
   */
  copyInto(out: Float32Array, stride: number, offset: number): void {
    const slab = this.#tokens * this.#width;
    for (let s = 0; s < this.#slabs; s++) {
      if (this.#data instanceof Float32Array) out.set(this.#data.subarray(s * slab, (s + 1) * slab), s * stride + offset);
      else halfBitsToFloat32Into(this.#data, s * slab, out, s * stride + offset, slab);
    }
  }

  /** Empties the residual (a flush); the capacity stays for the next rows. */
  clear(): void {
    this.#tokens = 0;
  }

  dispose(): void {
    this.#data = this.dtype === 'float16' ? new Uint16Array(0) : new Float32Array(0);
    this.#tokens = 0;
  }
}
