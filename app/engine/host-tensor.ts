/**
 * A tensor as the engine hands it to a decoder session and gets it back: a plain typed array with
 * its dims, row-major (STYLE.md §5). The ORT adapter wraps these without copying. float16 travels as
 * its IEEE binary16 bit patterns (`Uint16Array`), as onnxruntime does.
 */
export type HostTensor =
  | { readonly type: 'float32'; readonly dims: readonly number[]; readonly data: Float32Array }
  | { readonly type: 'float16'; readonly dims: readonly number[]; readonly data: Uint16Array }
  | { readonly type: 'int64'; readonly dims: readonly number[]; readonly data: BigInt64Array }
  /** ids, mask and positions of graphs that declare them int32 (onnxruntime.transformers exports) */
  | { readonly type: 'int32'; readonly dims: readonly number[]; readonly data: Int32Array }
  /** `use_cache_branch` of merged decoders: one byte per element, 0 or 1, as onnxruntime holds bool */
  | { readonly type: 'bool'; readonly dims: readonly number[]; readonly data: Uint8Array }
  /** packed quantized codes (the in-graph dequantization path feeds them as the store holds them) */
  | { readonly type: 'uint8'; readonly dims: readonly number[]; readonly data: Uint8Array };

export type HostTensorType = HostTensor['type'];

/** A float tensor: what KV, state and logits outputs are. */
export type FloatHostTensor = Extract<HostTensor, { type: 'float32' | 'float16' }>;

export function floatTensor(type: 'float32' | 'float16', dims: readonly number[], data: Float32Array | Uint16Array): FloatHostTensor {
  if (type === 'float32') {
    if (!(data instanceof Float32Array)) throw new TypeError('a float32 tensor needs a Float32Array');
    return { type, dims, data };
  }
  if (!(data instanceof Uint16Array)) throw new TypeError('a float16 tensor needs a Uint16Array of binary16 bits');
  return { type, dims, data };
}

export function int64Tensor(dims: readonly number[], data: BigInt64Array): HostTensor {
  return { type: 'int64', dims, data };
}

export function int32Tensor(dims: readonly number[], data: Int32Array): HostTensor {
  return { type: 'int32', dims, data };
}

export function boolTensor(dims: readonly number[], data: Uint8Array): HostTensor {
  return { type: 'bool', dims, data };
}

export function uint8Tensor(dims: readonly number[], data: Uint8Array): HostTensor {
  return { type: 'uint8', dims, data };
}
