import type { MessageInitShape } from '@bufbuild/protobuf';
import { AttributeProto_AttributeType as AttributeType, type AttributeProtoSchema } from 'onnx-buf';
import type { OnnxGraphInit } from './graph-builder.js';

/** A node attribute as the builder writes it (onnx-buf's init shape). */
export type OnnxAttribute = MessageInitShape<typeof AttributeProtoSchema>;

/** Typed constructors for node attributes: ONNX needs the attribute type spelled out (2 is INT, 2.0 FLOAT). */
export function intAttribute(name: string, value: number): OnnxAttribute {
  return { name, type: AttributeType.INT, i: BigInt(value) };
}

export function intsAttribute(name: string, values: readonly number[]): OnnxAttribute {
  return { name, type: AttributeType.INTS, ints: values.map((value) => BigInt(value)) };
}

export function floatAttribute(name: string, value: number): OnnxAttribute {
  return { name, type: AttributeType.FLOAT, f: value };
}

export function stringAttribute(name: string, value: string): OnnxAttribute {
  return { name, type: AttributeType.STRING, s: encodeAscii(value) };
}

/** A subgraph attribute: an If node's `then_branch` / `else_branch` (a graph built with its own GraphBuilder). */
export function graphAttribute(name: string, graph: OnnxGraphInit): OnnxAttribute {
  return { name, type: AttributeType.GRAPH, g: graph };
}

/** Attribute strings kvscope writes are ASCII names (`com.microsoft`, modes), one byte per character. */
function encodeAscii(value: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code > 0x7f) throw new RangeError(`attribute string ${JSON.stringify(value)} is not ASCII`);
    bytes[i] = code;
  }
  return bytes;
}
