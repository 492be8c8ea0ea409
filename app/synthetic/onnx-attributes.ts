import { OnnxAttributeType, type OnnxAttribute } from './onnx-schema.js';

/** Typed constructors for node attributes: ONNX needs the attribute type spelled out (2 is INT, 2.0 FLOAT). */
export function intAttribute(name: string, value: number): OnnxAttribute {
  return { name, type: OnnxAttributeType.INT, i: value };
}

export function intsAttribute(name: string, values: readonly number[]): OnnxAttribute {
  return { name, type: OnnxAttributeType.INTS, ints: [...values] };
}

export function floatAttribute(name: string, value: number): OnnxAttribute {
  return { name, type: OnnxAttributeType.FLOAT, f: value };
}
