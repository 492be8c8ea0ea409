import type { NodeProto } from 'onnx-buf';
import type { GraphEditor } from './graph-editor.js';

/** Ops that pass a past tensor on unchanged in value (stories260k's exporter puts a float→float Cast there). */
const TRANSPARENT = new Set(['Cast', 'Identity']);
/** onnxruntime's fused attention ops that take the past as an input and return the present. */
const FUSED_ATTENTION = new Set(['GroupQueryAttention', 'MultiHeadAttention', 'Attention']);

/** Where a layer's past key (or value) meets the new rows. */
export interface AttentionUse {
  /** the node that joins past and new: a Concat (Optimum) or a fused attention op (model builder) */
  readonly node: NodeProto;
  /**
   * A tensor of this layer's attention computed from the layer's input hidden states, never from its
   * past: the Concat's other input (the new keys or values), or a fused op's query.
   */
  readonly fresh: string;
  /** Optimum-style Concat(past, new) on the sequence axis: the new rows are `fresh` itself */
  readonly concatenates: boolean;
  /** the value-preserving nodes between the past and `node`, in order (stories260k: one float→float Cast) */
  readonly chain: readonly NodeProto[];
  /** the Shape nodes that read the past or a value of the chain (exporters take the past length from them) */
  readonly shapeReaders: readonly NodeProto[];
}

/**
 * Follows a past input through value-preserving ops to the node that uses it as the attention's
 * history; null when the graph does something else with it (then the layer runs ungated).
 * Shape nodes are skipped: exporters read the past length off the past (attention masks, positions).
 */
export function findAttentionUse(editor: GraphEditor, past: string): AttentionUse | null {
  let value = past;
  const chain: NodeProto[] = [];
  const shapeReaders: NodeProto[] = [];
  for (let hops = 0; hops < 8; hops++) {
    const readers = editor.consumers(value);
    shapeReaders.push(...readers.filter((node) => node.opType === 'Shape' && node.domain === ''));
    const users = readers.filter((node) => node.opType !== 'Shape' || node.domain !== '');
    if (users.length !== 1) return null;
    const node = users[0]!;
    if (TRANSPARENT.has(node.opType) && node.domain === '' && node.input.length === 1) {
      chain.push(node);
      value = node.output[0]!;
      continue;
    }
    if (node.opType === 'Concat' && node.domain === '') {
      const others = node.input.filter((input) => input !== value);
      const axis = node.attribute.find((attribute) => attribute.name === 'axis')?.i;
      if (others.length !== 1 || node.input[0] !== value || (axis !== 2n && axis !== -2n)) return null;
      return { node, fresh: others[0]!, concatenates: true, chain, shapeReaders };
    }
    if (FUSED_ATTENTION.has(node.opType) && node.domain === 'com.microsoft' && node.input[0] !== undefined && node.input[0] !== '') {
      return { node, fresh: node.input[0], concatenates: false, chain, shapeReaders };
    }
    return null;
  }
  return null;
}

/** Ops that move or repeat a joined history's values without mixing them (transformers' repeat_kv exports as Unsqueeze, Expand, Reshape). */
const VALUE_MOVING = new Set(['Cast', 'Identity', 'Reshape', 'Unsqueeze', 'Squeeze', 'Expand', 'Transpose']);

/**
 * The attention weights that multiply a layer's joined values (`softmax(q·kᵀ)` in `MatMul(weights, v)`),
 * followed from the values' Concat through value-moving ops; null when the graph does something else.
 * `ignore`: readers that lead only to the full present output, which the rewrite drops.
 *
 * Why: the weights exist only once the layer's keys are consumed (their joined tensor, its transpose,
 * any repeat of it), which ORT then frees. Values whose dequantization waits for them are built
 * while no key history is alive, so one side's history is in flight at a time, not a whole layer's
 * keys and values together (measured by bench/in-graph-memory.ts `layers`).
 */
export function findAttentionWeights(editor: GraphEditor, joinedValues: string, ignore: ReadonlySet<NodeProto>): string | null {
  let value = joinedValues;
  for (let hops = 0; hops < 8; hops++) {
    const users = editor.consumers(value).filter((node) => !ignore.has(node) && (node.opType !== 'Shape' || node.domain !== ''));
    if (users.length !== 1) return null;
    const node = users[0]!;
    if (node.domain !== '') return null;
    if (node.opType === 'MatMul') return node.input[1] === value && node.input[0] !== undefined && node.input[0] !== '' ? node.input[0] : null;
    if (!VALUE_MOVING.has(node.opType) || node.input[0] !== value) return null;
    value = node.output[0]!;
  }
  return null;
}

/**
 * An int64 `[1]` zero that can only be computed once every tensor in `after` exists:
 * `Shape(t) − Shape(t)`, first element, summed over `after`. Added to the packed codes' shape, which
 * the codes are then reshaped to (unpack-codes.ts), it makes a layer's whole dequantization wait for
 * `after` without touching a value (shapes of computed tensors with a dynamic sequence axis, which
 * ORT cannot fold away).
 *
 * Why: ORT may run a node as soon as its inputs exist, and the dequantization of every layer depends
 * on graph inputs only; left alone, all layers' histories could be materialized before the first
 * attention runs, which is the very memory the in-graph path exists to avoid. Waiting for the layer's
 * own fresh keys (values) means waiting for the previous layer's whole block: its attention has read
 * its history, which ORT then frees, before this layer's history is built.
 */
export function gateAfter(editor: GraphEditor, scope: string, after: readonly string[]): string {
  let gate: string | null = null;
  for (const tensor of after) {
    const shape = editor.op(scope, 'Shape', [tensor]);
    const zeros = editor.op(scope, 'Sub', [shape, shape]);
    const zero = editor.op(scope, 'Slice', [zeros, editor.int64([0]), editor.int64([1]), editor.int64([0])]);
    gate = gate === null ? zero : editor.op(scope, 'Add', [gate, zero]);
  }
  if (gate === null) throw new RangeError('gateAfter needs at least one tensor to wait for');
  return gate;
}
