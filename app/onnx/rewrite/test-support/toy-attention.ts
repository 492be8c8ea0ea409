import { intAttribute } from '../../attributes.js';
import { OnnxDataType } from '../../element-types.js';
import { GraphBuilder } from '../../graph-builder.js';
import { createModel, type ModelProto } from '../../onnx-model.js';
import type { InGraphDequantizeSpec, InGraphLayerSide } from '../in-graph-spec.js';

/**
 * A decoder reduced to its cache I/O, for rewrite tests: per layer, Optimum's
 * `present = Concat(past, new)` on the sequence axis, the new rows fed as inputs `new_key.{i}` /
 * `new_value.{i}`, and `attended.{i}.key|value` = what attention reads (the whole Concat), so a test
 * sees exactly the tensor transformers' update returns.
 */
export function toyAttentionModel(layers: number, kvHeads: number, headDim: number, dtype: 'float32' | 'float16' = 'float32'): ModelProto {
  const g = new GraphBuilder();
  const type = dtype === 'float16' ? OnnxDataType.FLOAT16 : OnnxDataType.FLOAT;
  for (let i = 0; i < layers; i++) {
    const scope = g.at(`/toy/layers.${i}`);
    const past = { key: g.input(`past_key_values.${i}.key`, type, ['batch', kvHeads, 'past', headDim]), value: g.input(`past_key_values.${i}.value`, type, ['batch', kvHeads, 'past', headDim]) };
    const fresh = { key: g.input(`new_key.${i}`, type, ['batch', kvHeads, 'new', headDim]), value: g.input(`new_value.${i}`, type, ['batch', kvHeads, 'new', headDim]) };
    const presentKey = scope.opNamed(`present.${i}.key`, 'Concat', [past.key, fresh.key], [intAttribute('axis', 2)]);
    const presentValue = scope.opNamed(`present.${i}.value`, 'Concat', [past.value, fresh.value], [intAttribute('axis', 2)]);
    g.output(`present.${i}.key`, type, ['batch', kvHeads, 'total', headDim]);
    g.output(`present.${i}.value`, type, ['batch', kvHeads, 'total', headDim]);
    scope.opNamed(`attended.${i}.key`, 'Identity', [presentKey]);
    scope.opNamed(`attended.${i}.value`, 'Identity', [presentValue]);
    g.output(`attended.${i}.key`, type, ['batch', kvHeads, 'total', headDim]);
    g.output(`attended.${i}.value`, type, ['batch', kvHeads, 'total', headDim]);
  }
  return createModel({
    irVersion: 8n,
    producerName: 'kvscope-test',
    graph: g.build('toy_attention', 'per layer: present = Concat(past, new), attended = present'),
    opsetImport: [{ domain: '', version: 17n }],
  });
}

/** The spec for every layer of a toy model, one side spec for keys and one for values. */
export function toySpec(layers: number, key: InGraphLayerSide, value: InGraphLayerSide, dtype: 'float32' | 'float16' = 'float32', unpack: InGraphDequantizeSpec['unpack'] = 'bitwise'): InGraphDequantizeSpec {
  return {
    unpack,
    layers: Array.from({ length: layers }, (_, i) => ({
      layer: i, pastKey: `past_key_values.${i}.key`, pastValue: `past_key_values.${i}.value`, presentKey: `present.${i}.key`, presentValue: `present.${i}.value`,
      dtype, key, value,
    })),
  };
}
