/**
 * A KV tensor as the cache and the quantizers see it: `[batch, kvHeads, seq, headDim]`, row-major.
 *
 * Values are held as float32 in both dtypes. For `float16` every element is exactly representable in
 * IEEE binary16 (the quantizers round to it after each operation, as torch does in half precision);
 * conversion to the `Uint16Array` bit pattern happens only at I/O boundaries (`.npy`, ONNX feeds).
 */
export type KvDtype = 'float32' | 'float16';

/** `[batch, kvHeads, seq, headDim]` */
export type KvShape = readonly [batch: number, kvHeads: number, seq: number, headDim: number];

export interface KvTensor {
  readonly shape: KvShape;
  readonly dtype: KvDtype;
  /** [batch, kvHeads, seq, headDim], row-major; length = product of shape */
  readonly data: Float32Array;
}

export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function kvTensor(shape: KvShape, dtype: KvDtype, data: Float32Array): KvTensor {
  const n = elementCount(shape);
  if (data.length !== n) {
    throw new RangeError(`KV tensor data has ${data.length} values, but shape [${shape.join(', ')}] needs ${n}.`);
  }
  return { shape, dtype, data };
}

/** Bytes per stored element of a full-precision KV tensor. */
export function bytesPerElement(dtype: KvDtype): number {
  return dtype === 'float16' ? 2 : 4;
}
