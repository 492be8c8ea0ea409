import { describe, expect, it } from 'vitest';
import { intAttribute } from '../attributes.js';
import { OnnxDataType } from '../element-types.js';
import { GraphBuilder } from '../graph-builder.js';
import { createModel } from '../onnx-model.js';
import { GraphEditor } from './graph-editor.js';
import { findAttentionWeights } from './layer-gate.js';

/** One layer's values as transformers exports them: joined, repeated for the query groups (repeat_kv), multiplied by the weights. */
function valuesGraph(reader: 'matmul' | 'matmul-swapped' | 'two-readers'): { editor: GraphEditor; joined: string; present: string } {
  const g = new GraphBuilder();
  const scope = g.at('/m/layers.0');
  const f = OnnxDataType.FLOAT;
  const past = g.input('past_key_values.0.value', f, [1, 2, 'past', 4]);
  const fresh = g.input('new_value', f, [1, 2, 1, 4]);
  const weights = g.input('weights', f, [1, 4, 1, 'total']);
  const joined = scope.op('Concat', [past, fresh], [intAttribute('axis', 2)]);
  const present = scope.opNamed('present.0.value', 'Cast', [joined], [intAttribute('to', OnnxDataType.FLOAT)]);
  g.output(present, f, [1, 2, 'total', 4]);
  const repeated = scope.op('Reshape', [scope.op('Expand', [scope.op('Unsqueeze', [joined, g.int64([2])]), g.int64([1, 2, 2, 1, 1])]), g.int64([1, 4, -1, 4])]);
  if (reader === 'two-readers') g.output(scope.op('Identity', [joined]), f, [1, 2, 'total', 4]);
  const context = scope.op('MatMul', reader === 'matmul-swapped' ? [repeated, weights] : [weights, repeated]);
  g.output(context, f, [1, 4, 1, 4]);
  const model = createModel({ irVersion: 8n, producerName: 'kvscope-test', graph: g.build('values', 'one layer\'s values'), opsetImport: [{ domain: '', version: 17n }] });
  return { editor: new GraphEditor(model.graph!), joined, present };
}

describe('findAttentionWeights: what a layer\'s values may wait for', () => {
  it('follows the joined values through repeat_kv (Unsqueeze, Expand, Reshape) to MatMul(weights, values), past the present\'s Cast', () => {
    const { editor, joined } = valuesGraph('matmul');
    const presentCast = editor.consumers(joined).filter((node) => node.opType === 'Cast');
    expect(findAttentionWeights(editor, joined, new Set(presentCast))).toBe('weights');
  });

  it('without the present\'s path ignored, two readers: none (the values would be read elsewhere too)', () => {
    const { editor, joined } = valuesGraph('matmul');
    expect(findAttentionWeights(editor, joined, new Set())).toBeNull();
  });

  it('none where the values are the MatMul\'s first input, or have another reader', () => {
    for (const reader of ['matmul-swapped', 'two-readers'] as const) {
      const { editor, joined } = valuesGraph(reader);
      const presentCast = editor.consumers(joined).filter((node) => node.opType === 'Cast');
      expect(findAttentionWeights(editor, joined, new Set(presentCast)), reader).toBeNull();
    }
  });
});
