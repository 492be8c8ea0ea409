import { clone, create, fromBinary, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { ModelProtoSchema, type ModelProto } from 'onnx-buf';
import { OnnxFormatError } from './onnx-errors.js';

/**
 * The whole ONNX schema (onnx-buf: ONNX 1.20's onnx.proto compiled for @bufbuild/protobuf), so a
 * third-party graph decodes and re-encodes without losing a field: protobuf-es keeps the fields it
 * does not know as unknown fields and writes them back (readUnknownFields / writeUnknownFields are on
 * by default, and we say so explicitly). Rewrites (STYLE.md §16) decode, clone, change and encode.
 */
export type { ModelProto } from 'onnx-buf';

/** Parses the bytes of a `.onnx` file. Throws OnnxFormatError (what and where) on anything else. */
export function decodeModel(bytes: Uint8Array, fileName = 'the graph'): ModelProto {
  try {
    return fromBinary(ModelProtoSchema, bytes, { readUnknownFields: true });
  } catch (error) {
    throw new OnnxFormatError(`${fileName} is not a readable ONNX model (${error instanceof Error ? error.message : String(error)}).`,
      'Check that the file is a complete .onnx graph (a download may have stopped early), or export the model again.');
  }
}

/** Serializes a model to `.onnx` bytes, unknown fields included. */
export function encodeModel(model: ModelProto): Uint8Array {
  return toBinary(ModelProtoSchema, model, { writeUnknownFields: true });
}

/** A deep copy, so a rewrite never mutates the model it was given. */
export function cloneModel(model: ModelProto): ModelProto {
  return clone(ModelProtoSchema, model);
}

/** A new model from a plain init object (the synthetic builder's way in). */
export function createModel(init: MessageInitShape<typeof ModelProtoSchema>): ModelProto {
  return create(ModelProtoSchema, init);
}
