import { describe, expect, it } from 'vitest';
import { OnnxDataType } from './element-types.js';
import { GraphBuilder } from './graph-builder.js';
import { cloneModel, createModel, decodeModel, encodeModel } from './onnx-model.js';
import { OnnxFormatError } from './onnx-errors.js';

function smallModel(): Uint8Array {
  const g = new GraphBuilder();
  const x = g.input('x', OnnxDataType.FLOAT, [2]);
  g.output('y', OnnxDataType.FLOAT, [2]);
  g.at('/m').opNamed('y', 'Neg', [x]);
  return encodeModel(createModel({ irVersion: 8n, opsetImport: [{ domain: '', version: 17n }], graph: g.build('g', '') }));
}

describe('decodeModel / encodeModel', () => {
  it('keeps fields it does not know: a third-party graph round-trips byte for byte', () => {
    // field 4242, wire type 2 (length-delimited), 3 bytes: what a newer ONNX or an exporter might add
    const unknown = Uint8Array.of(0x92, 0x89, 0x02, 0x03, 0x61, 0x62, 0x63);
    const bytes = new Uint8Array([...smallModel(), ...unknown]);
    const again = encodeModel(decodeModel(bytes));
    expect([...again]).toEqual([...bytes]);
  });

  it('clones, so a rewrite never mutates its source', () => {
    const model = decodeModel(smallModel());
    const copy = cloneModel(model);
    copy.graph!.node[0]!.opType = 'Abs';
    expect(model.graph!.node[0]!.opType).toBe('Neg');
  });

  it('refuses bytes that are not a model with the file name and a fix', () => {
    expect(() => decodeModel(Uint8Array.of(0xff, 0xff, 0xff), 'broken.onnx')).toThrow(OnnxFormatError);
    expect(() => decodeModel(Uint8Array.of(0xff, 0xff, 0xff), 'broken.onnx')).toThrow(/broken\.onnx is not a readable ONNX model/);
  });
});
