import protobuf from 'protobufjs/light.js';

/**
 * The part of the ONNX protobuf format (onnx/onnx.proto, proto2, package `onnx`) that kvscope writes
 * and reads back: a model, its graph, nodes, attributes, initializers and typed inputs/outputs.
 * Written for kvscope, not copied: field numbers and wire types are facts of the format, and a
 * message or field we never use is simply left out (protobufjs drops unknown fields on decode, so do
 * not use this schema to rewrite third-party models).
 *
 * Repeated scalars follow onnx.proto: `TensorProto.float_data`/`int64_data` are declared packed,
 * everything else unpacked (proto2's default). Readers accept either encoding.
 */
const ONNX_SCHEMA = {
  nested: {
    onnx: {
      nested: {
        ModelProto: {
          fields: {
            irVersion: { type: 'int64', id: 1 },
            producerName: { type: 'string', id: 2 },
            producerVersion: { type: 'string', id: 3 },
            domain: { type: 'string', id: 4 },
            modelVersion: { type: 'int64', id: 5 },
            docString: { type: 'string', id: 6 },
            graph: { type: 'GraphProto', id: 7 },
            opsetImport: { rule: 'repeated', type: 'OperatorSetIdProto', id: 8 },
            metadataProps: { rule: 'repeated', type: 'StringStringEntryProto', id: 14 },
          },
        },
        OperatorSetIdProto: {
          fields: {
            domain: { type: 'string', id: 1 },
            version: { type: 'int64', id: 2 },
          },
        },
        StringStringEntryProto: {
          fields: {
            key: { type: 'string', id: 1 },
            value: { type: 'string', id: 2 },
          },
        },
        GraphProto: {
          fields: {
            node: { rule: 'repeated', type: 'NodeProto', id: 1 },
            name: { type: 'string', id: 2 },
            initializer: { rule: 'repeated', type: 'TensorProto', id: 5 },
            docString: { type: 'string', id: 10 },
            input: { rule: 'repeated', type: 'ValueInfoProto', id: 11 },
            output: { rule: 'repeated', type: 'ValueInfoProto', id: 12 },
            valueInfo: { rule: 'repeated', type: 'ValueInfoProto', id: 13 },
          },
        },
        NodeProto: {
          fields: {
            input: { rule: 'repeated', type: 'string', id: 1 },
            output: { rule: 'repeated', type: 'string', id: 2 },
            name: { type: 'string', id: 3 },
            opType: { type: 'string', id: 4 },
            attribute: { rule: 'repeated', type: 'AttributeProto', id: 5 },
            docString: { type: 'string', id: 6 },
            domain: { type: 'string', id: 7 },
          },
        },
        AttributeProto: {
          fields: {
            name: { type: 'string', id: 1 },
            f: { type: 'float', id: 2 },
            i: { type: 'int64', id: 3 },
            s: { type: 'bytes', id: 4 },
            t: { type: 'TensorProto', id: 5 },
            floats: { rule: 'repeated', type: 'float', id: 7 },
            ints: { rule: 'repeated', type: 'int64', id: 8 },
            docString: { type: 'string', id: 13 },
            // onnx.AttributeProto.AttributeType; an enum on the wire is a varint like int32
            type: { type: 'int32', id: 20 },
          },
        },
        TensorProto: {
          fields: {
            dims: { rule: 'repeated', type: 'int64', id: 1 },
            // onnx.TensorProto.DataType (see OnnxDataType)
            dataType: { type: 'int32', id: 2 },
            floatData: { rule: 'repeated', type: 'float', id: 4, options: { packed: true } },
            int64Data: { rule: 'repeated', type: 'int64', id: 7, options: { packed: true } },
            name: { type: 'string', id: 8 },
            rawData: { type: 'bytes', id: 9 },
            docString: { type: 'string', id: 12 },
          },
        },
        ValueInfoProto: {
          fields: {
            name: { type: 'string', id: 1 },
            type: { type: 'TypeProto', id: 2 },
            docString: { type: 'string', id: 3 },
          },
        },
        TypeProto: {
          fields: {
            tensorType: { type: 'TypeProtoTensor', id: 1 },
          },
        },
        // onnx.TypeProto.Tensor, flattened to a top-level name (names are not on the wire)
        TypeProtoTensor: {
          fields: {
            elemType: { type: 'int32', id: 1 },
            shape: { type: 'TensorShapeProto', id: 2 },
          },
        },
        TensorShapeProto: {
          fields: {
            dim: { rule: 'repeated', type: 'TensorShapeDimension', id: 1 },
          },
        },
        // onnx.TensorShapeProto.Dimension: exactly one of dimValue / dimParam is set
        TensorShapeDimension: {
          fields: {
            dimValue: { type: 'int64', id: 1 },
            dimParam: { type: 'string', id: 2 },
          },
        },
      },
    },
  },
};

/** onnx.TensorProto.DataType values kvscope uses. */
export const OnnxDataType = {
  FLOAT: 1,
  INT64: 7,
  BOOL: 9,
} as const;
export type OnnxDataType = (typeof OnnxDataType)[keyof typeof OnnxDataType];

/** onnx.AttributeProto.AttributeType values kvscope uses. */
export const OnnxAttributeType = {
  FLOAT: 1,
  INT: 2,
  STRING: 3,
  TENSOR: 4,
  FLOATS: 6,
  INTS: 7,
} as const;
export type OnnxAttributeType = (typeof OnnxAttributeType)[keyof typeof OnnxAttributeType];

export interface OnnxTensor {
  name: string;
  dims: number[];
  dataType: OnnxDataType;
  /** little-endian element bytes, the layout ORT maps without a copy */
  rawData: Uint8Array;
  docString?: string;
}

export interface OnnxAttribute {
  name: string;
  type: OnnxAttributeType;
  f?: number;
  i?: number;
  s?: Uint8Array;
  t?: OnnxTensor;
  floats?: number[];
  ints?: number[];
}

export interface OnnxNode {
  name: string;
  opType: string;
  input: string[];
  output: string[];
  attribute: OnnxAttribute[];
  domain?: string;
  docString?: string;
}

/** A dimension is a fixed size or a symbolic name (`batch_size`, `past_sequence_length + 1`). */
export type OnnxDim = number | string;

export interface OnnxValueInfo {
  name: string;
  type: { tensorType: { elemType: OnnxDataType; shape: { dim: Array<{ dimValue: number } | { dimParam: string }> } } };
  docString?: string;
}

export interface OnnxGraph {
  name: string;
  node: OnnxNode[];
  initializer: OnnxTensor[];
  input: OnnxValueInfo[];
  output: OnnxValueInfo[];
  docString?: string;
}

export interface OnnxModel {
  irVersion: number;
  producerName: string;
  producerVersion: string;
  domain?: string;
  modelVersion?: number;
  docString?: string;
  graph: OnnxGraph;
  opsetImport: Array<{ domain: string; version: number }>;
  metadataProps: Array<{ key: string; value: string }>;
}

const root = protobuf.Root.fromJSON(ONNX_SCHEMA);
const modelType = root.lookupType('onnx.ModelProto');

/** Serializes a model to the bytes of a `.onnx` file. */
export function encodeOnnxModel(model: OnnxModel): Uint8Array {
  return modelType.encode(model).finish();
}

/**
 * Parses `.onnx` bytes into plain objects (int64 as numbers, bytes as Uint8Array views) for tests
 * and inspection. Only the fields in this schema survive.
 */
export function decodeOnnxModel(bytes: Uint8Array): OnnxModel {
  const message = modelType.decode(bytes);
  return modelType.toObject(message, { longs: Number, arrays: true, defaults: false }) as OnnxModel;
}
