import { TensorProto_DataType as DataType } from 'onnx-buf';

export { TensorProto_DataType as OnnxDataType } from 'onnx-buf';

/**
 * onnx.TensorProto.DataType → the element type name onnxruntime uses in its metadata and tensors
 * (`float32`, `float16`, `int64`, …), so a type read from the protobuf compares equal to one read
 * from a session. Types onnxruntime-node has no tensor name for get ONNX's own lower-case name
 * (`bfloat16`, `float8e4m3fn`), which no kvscope check accepts by accident.
 */
const ELEMENT_TYPE_NAMES: Readonly<Partial<Record<DataType, string>>> = {
  [DataType.FLOAT]: 'float32',
  [DataType.UINT8]: 'uint8',
  [DataType.INT8]: 'int8',
  [DataType.UINT16]: 'uint16',
  [DataType.INT16]: 'int16',
  [DataType.INT32]: 'int32',
  [DataType.INT64]: 'int64',
  [DataType.STRING]: 'string',
  [DataType.BOOL]: 'bool',
  [DataType.FLOAT16]: 'float16',
  [DataType.DOUBLE]: 'float64',
  [DataType.UINT32]: 'uint32',
  [DataType.UINT64]: 'uint64',
  [DataType.COMPLEX64]: 'complex64',
  [DataType.COMPLEX128]: 'complex128',
  [DataType.BFLOAT16]: 'bfloat16',
  [DataType.FLOAT8E4M3FN]: 'float8e4m3fn',
  [DataType.FLOAT8E4M3FNUZ]: 'float8e4m3fnuz',
  [DataType.FLOAT8E5M2]: 'float8e5m2',
  [DataType.FLOAT8E5M2FNUZ]: 'float8e5m2fnuz',
  [DataType.UINT4]: 'uint4',
  [DataType.INT4]: 'int4',
  [DataType.FLOAT4E2M1]: 'float4e2m1',
  [DataType.FLOAT8E8M0]: 'float8e8m0',
  [DataType.UINT2]: 'uint2',
  [DataType.INT2]: 'int2',
};

/** Bits per element, for the byte size of a tensor that is counted, not read. */
const ELEMENT_BITS: Readonly<Partial<Record<DataType, number>>> = {
  [DataType.FLOAT]: 32, [DataType.UINT8]: 8, [DataType.INT8]: 8, [DataType.UINT16]: 16, [DataType.INT16]: 16,
  [DataType.INT32]: 32, [DataType.INT64]: 64, [DataType.BOOL]: 8, [DataType.FLOAT16]: 16, [DataType.DOUBLE]: 64,
  [DataType.UINT32]: 32, [DataType.UINT64]: 64, [DataType.COMPLEX64]: 64, [DataType.COMPLEX128]: 128,
  [DataType.BFLOAT16]: 16, [DataType.FLOAT8E4M3FN]: 8, [DataType.FLOAT8E4M3FNUZ]: 8, [DataType.FLOAT8E5M2]: 8,
  [DataType.FLOAT8E5M2FNUZ]: 8, [DataType.UINT4]: 4, [DataType.INT4]: 4, [DataType.FLOAT4E2M1]: 4,
  [DataType.FLOAT8E8M0]: 8, [DataType.UINT2]: 2, [DataType.INT2]: 2,
};

/** The onnxruntime-style name of an ONNX element type; `undefined(N)` for a number ONNX does not define. */
export function elementTypeName(dataType: number): string {
  return ELEMENT_TYPE_NAMES[dataType as DataType] ?? `undefined(${dataType})`;
}

/** Bits per element, or null for strings and unknown types. */
export function elementBits(dataType: number): number | null {
  return ELEMENT_BITS[dataType as DataType] ?? null;
}
