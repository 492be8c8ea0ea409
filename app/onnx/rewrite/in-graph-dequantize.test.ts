import { describe, expect, it } from 'vitest';
import { decodeModel, encodeModel } from '../onnx-model.js';
import { rewriteForInGraphDequantize } from './in-graph-dequantize.js';
import { emptyStoreShapes, inGraphUnsupportedReason, type InGraphSideSpec } from './in-graph-spec.js';
import { GraphRewriteError } from './rewrite-error.js';
import { toyAttentionModel, toySpec } from './test-support/toy-attention.js';

const QUANTO4: InGraphSideSpec = { backend: 'quanto', nbits: 4, axis: 0, groupSize: 32, kvHeads: 2, headDim: 16 };
const HQQ2: InGraphSideSpec = { backend: 'hqq', nbits: 2, axis: 1, groupSize: 16, kvHeads: 2, headDim: 16 };

function names(values: readonly { name: string }[]): string[] {
  return values.map((value) => value.name);
}

describe('rewriteForInGraphDequantize: the graph structure (STYLE.md §16)', () => {
  it('replaces each quantized layer\'s past by the stored parts and its present by the new rows, names derived from the source', () => {
    const source = toyAttentionModel(2, 2, 16);
    const { model, io } = rewriteForInGraphDequantize(source, toySpec(2, QUANTO4, HQQ2));
    const graph = model.graph!;
    expect(names(graph.input)).toEqual([
      'new_key.0', 'new_value.0', 'new_key.1', 'new_value.1',
      'past_key_values.0.key.codes', 'past_key_values.0.key.scale', 'past_key_values.0.key.zero', 'past_key_values.0.key.residual',
      'past_key_values.0.value.codes', 'past_key_values.0.value.scale', 'past_key_values.0.value.zero', 'past_key_values.0.value.residual',
      'past_key_values.1.key.codes', 'past_key_values.1.key.scale', 'past_key_values.1.key.zero', 'past_key_values.1.key.residual',
      'past_key_values.1.value.codes', 'past_key_values.1.value.scale', 'past_key_values.1.value.zero', 'past_key_values.1.value.residual',
    ]);
    expect(names(graph.output)).toEqual([
      'attended.0.key', 'attended.0.value', 'attended.1.key', 'attended.1.value',
      'present.0.key.new_rows', 'present.0.value.new_rows', 'present.1.key.new_rows', 'present.1.value.new_rows',
    ]);
    expect(io.layers.map((layer) => [layer.layer, layer.key.codes, layer.value.newRows, layer.gated])).toEqual([
      [0, 'past_key_values.0.key.codes', 'present.0.value.new_rows', true],
      [1, 'past_key_values.1.key.codes', 'present.1.value.new_rows', true],
    ]);
    // the codes are uint8 (2), scale and residual float32 (1)
    const typeOf = (name: string): number | undefined => {
      const info = graph.input.find((input) => input.name === name)!;
      return info.type?.value.case === 'tensorType' ? info.type.value.value.elemType : undefined;
    };
    expect([typeOf('past_key_values.0.key.codes'), typeOf('past_key_values.0.key.scale'), typeOf('past_key_values.0.key.residual')]).toEqual([2, 1, 1]);
    // Optimum's Concat now joins history, residual and the new rows: no past tensor of its own
    const concat = graph.node.find((node) => node.output.includes('present.0.key'))!;
    expect(concat.input).toHaveLength(3);
    expect(concat.input[1]).toBe('past_key_values.0.key.residual');
    expect(concat.input[2]).toBe('new_key.0');
    expect(graph.node.some((node) => node.output.includes('past_key_values.0.key'))).toBe(false);
    expect(graph.node.every((node) => node.name.startsWith('/toy/') || node.name.startsWith('/kvscope/'))).toBe(true);
  });

  it('never mutates the source model, and is a function of it (same input, same bytes)', () => {
    const source = toyAttentionModel(2, 2, 16);
    const before = encodeModel(source);
    const first = encodeModel(rewriteForInGraphDequantize(source, toySpec(2, QUANTO4, QUANTO4)).model);
    const second = encodeModel(rewriteForInGraphDequantize(decodeModel(before), toySpec(2, QUANTO4, QUANTO4)).model);
    expect(encodeModel(source)).toEqual(before);
    expect(first).toEqual(second);
  });

  it('writes nodes in a topological order and records the rewrite in the metadata', () => {
    const { model } = rewriteForInGraphDequantize(toyAttentionModel(3, 2, 16, 'float16'), toySpec(3, HQQ2, QUANTO4, 'float16', 'arithmetic'));
    const graph = model.graph!;
    const available = new Set<string>([...names(graph.input), ...names(graph.initializer), '']);
    for (const node of graph.node) {
      for (const input of node.input) expect(available.has(input), `${node.name} reads ${input} before it exists`).toBe(true);
      for (const output of node.output) available.add(output);
    }
    for (const output of graph.output) expect(available.has(output.name), output.name).toBe(true);
    const meta = JSON.parse(model.metadataProps.find((entry) => entry.key === 'kvscope_in_graph_dequantize')!.value) as { unpack: string; layers: unknown[] };
    expect(meta.unpack).toBe('arithmetic');
    expect(meta.layers).toHaveLength(3);
    // arithmetic unpacking uses no BitShift (WebGPU has none)
    expect(graph.node.some((node) => node.opType === 'BitShift')).toBe(false);
  });

  it('leaves layers outside the spec as they were (a layer policy\'s dynamic layers)', () => {
    const spec = toySpec(3, QUANTO4, QUANTO4);
    const { model, io } = rewriteForInGraphDequantize(toyAttentionModel(3, 2, 16), { ...spec, layers: [spec.layers[0]!, spec.layers[2]!] });
    expect(io.layers.map((layer) => layer.layer)).toEqual([0, 2]);
    expect(names(model.graph!.input)).toContain('past_key_values.1.key');
    expect(names(model.graph!.output)).toContain('present.1.value');
  });

  it('refuses what it cannot express, with the reason and the fix', () => {
    const source = toyAttentionModel(1, 2, 16);
    const rotated = { backend: 'runtime-format', format: 'llama.cpp:q8_0+rot', kvHeads: 2, headDim: 16 } as const;
    expect(() => rewriteForInGraphDequantize(source, toySpec(1, rotated, QUANTO4))).toThrow(GraphRewriteError);
    expect(() => rewriteForInGraphDequantize(source, toySpec(1, rotated, QUANTO4))).toThrow(/inverse Hadamard rotation/);
    expect(inGraphUnsupportedReason({ backend: 'hqq', nbits: 3, axis: 0 })).toBeNull();
    expect(inGraphUnsupportedReason({ backend: 'quanto', nbits: 8, axis: 0 })).toMatch(/qint2 and qint4/);
    expect(inGraphUnsupportedReason({ backend: 'hqq', nbits: 1, axis: 1 })).toBeNull();
    const wrongDtype = toySpec(1, QUANTO4, QUANTO4, 'float16');
    expect(() => rewriteForInGraphDequantize(source, wrongDtype)).toThrow(/is not float16/);
    const missing = toySpec(1, QUANTO4, QUANTO4);
    expect(() => rewriteForInGraphDequantize(source, { ...missing, layers: [{ ...missing.layers[0]!, pastKey: 'past.0.k' }] })).toThrow(/no input `past.0.k`/);
  });

  it('describes the empty store the prefill is fed as a grid with no groups', () => {
    expect(emptyStoreShapes({ backend: 'quanto', nbits: 4, axis: 0, groupSize: 64 })).toEqual({ codes: [0, 64], params: [0, 1] });
    expect(emptyStoreShapes({ backend: 'quanto', nbits: 2, axis: -1, groupSize: 64 })).toEqual({ codes: [16, 0], params: [1, 0] });
    expect(emptyStoreShapes({ backend: 'hqq', nbits: 8, axis: 0, groupSize: 32 })).toEqual({ codes: [32, 0], params: [1, 0] });
    expect(emptyStoreShapes({ backend: 'hqq', nbits: 4, axis: 1, groupSize: 32 })).toEqual({ codes: [0, 32], params: [0, 1] });
  });
});
