import { create } from '@bufbuild/protobuf';
import {
  GraphProtoSchema, NodeProtoSchema, TensorShapeProtoSchema, TensorShapeProto_DimensionSchema, TypeProtoSchema,
  TypeProto_TensorSchema, ValueInfoProtoSchema, type GraphProto, type NodeProto,
} from 'onnx-buf';
import { intAttribute } from '../attributes.js';
import { cloneModel, createModel, type ModelProto } from '../onnx-model.js';

/**
 * The LM head of a decoder graph, cut from it (the compact exact eval reference, docs/eval-record.md
 * "The compact form, exact"): the final hidden state `hidden` (what the logits' MatMul or Gemm takes
 * besides its weight) and every node between it and the logits output. The reference keeps the hidden
 * state (hidden_size floats per token, not vocabulary-many) and recomputes the logits with the head
 * alone, whose session gives the full graph's logits bit for bit (lm-head-split.ort.test.ts on real
 * graphs; app/node/lab/stored-reference.ts checks every window by their sha256). Pure functions:
 * ModelProto in, new ModelProto out, the source never changed (STYLE.md §16).
 */
export interface LmHead {
  /** the head's input: the final hidden state, `[batch, seq, hidden]` */
  readonly hidden: string;
  /** the graph output the head computes */
  readonly logits: string;
  /** the head's nodes, in the source's order */
  readonly nodes: readonly NodeProto[];
  /** the initializers the head reads (its weight, constants) */
  readonly initializers: readonly string[];
}

const PROJECTIONS = new Set(['MatMul', 'Gemm']);

/**
 * Finds the head that computes `logitsName`: walking back from it, the first MatMul/Gemm one of whose
 * inputs depends on initializers and constants only; its other input is the hidden state. Everything
 * from there to the logits (a Cast, a soft-cap, a bias) must depend on the hidden state, initializers
 * and constants only; returns the reason otherwise (the logits depend on something else, no such
 * projection, subgraphs).
 */
export function findLmHead(model: ModelProto, logitsName: string): LmHead | { readonly reason: string } {
  const graph = model.graph;
  if (graph === undefined) return { reason: 'the model has no graph' };
  if (!graph.output.some((output) => output.name === logitsName)) return { reason: `the graph has no output ${logitsName}` };
  const producer = new Map<string, NodeProto>();
  for (const node of graph.node) for (const output of node.output) producer.set(output, node);
  const initializers = new Set(graph.initializer.map((tensor) => tensor.name));
  const constantMemo = new Map<string, boolean>();
  const isConstant = (name: string): boolean => {
    if (name === '' || initializers.has(name)) return true;
    const known = constantMemo.get(name);
    if (known !== undefined) return known;
    const node = producer.get(name);
    constantMemo.set(name, false);
    const result = node !== undefined && node.attribute.every((a) => a.g === undefined && a.graphs.length === 0) && node.input.every(isConstant);
    constantMemo.set(name, result);
    return result;
  };
  // Walk back along the non-constant inputs to the first projection with a constant weight.
  let current = logitsName;
  let hidden: string | null = null;
  for (let steps = 0; steps < 64 && hidden === null; steps++) {
    const node = producer.get(current);
    if (node === undefined) return { reason: `${current} is not computed by a node the head could start from` };
    const variable = node.input.filter((input) => !isConstant(input));
    if (PROJECTIONS.has(node.opType) && variable.length === 1 && node.input.length >= 2) {
      hidden = variable[0]!;
      break;
    }
    // A Reshape back to [batch, seq, vocab] whose shape is read off a tensor (Shape, Concat): its data is the way on.
    const data = RESHAPES.has(node.opType) && !isConstant(node.input[0] ?? '') && node.input.slice(1).every((input) => isConstant(input) || isShapeOnly(input, producer, isConstant))
      ? node.input[0]! : null;
    if (data === null && variable.length !== 1) return { reason: `${node.opType} node ${node.name || node.output[0]} before the logits takes ${variable.length} computed inputs; no LM head projection was found` };
    current = data ?? variable[0]!;
  }
  if (hidden === null) return { reason: 'no MatMul or Gemm with a constant weight was found before the logits' };
  // The projection's input may be a flattened view of the hidden state whose shape the head reads too
  // (a Gemm head: Flatten, Gemm, Reshape to Shape(hidden)): the hidden state is then the first tensor up
  // that chain of one-input reshapes from which the whole head can be computed.
  for (let candidate: string | undefined = hidden; candidate !== undefined; candidate = viewSource(candidate, producer, isConstant)) {
    const head = collectHead(graph, producer, initializers, logitsName, candidate);
    if (!('reason' in head)) return head;
    if (viewSource(candidate, producer, isConstant) === undefined) return head;
  }
  return { reason: 'no MatMul or Gemm with a constant weight was found before the logits' };
}

const RESHAPES = new Set(['Reshape', 'Expand']);
const VIEWS = new Set(['Flatten', 'Reshape', 'Squeeze', 'Unsqueeze', 'Identity']);

/** Whether `name` depends on tensors' shapes only (Shape nodes, constants and what is computed from them). */
function isShapeOnly(name: string, producer: ReadonlyMap<string, NodeProto>, isConstant: (name: string) => boolean): boolean {
  if (isConstant(name)) return true;
  const node = producer.get(name);
  if (node === undefined) return false;
  if (node.opType === 'Shape') return true;
  return node.input.every((input) => isShapeOnly(input, producer, isConstant));
}

/** The tensor `name` is a view of (a one-input Flatten/Reshape/Squeeze/Unsqueeze/Identity), if it is one. */
function viewSource(name: string, producer: ReadonlyMap<string, NodeProto>, isConstant: (name: string) => boolean): string | undefined {
  const node = producer.get(name);
  if (node === undefined || !VIEWS.has(node.opType)) return undefined;
  const variable = node.input.filter((input) => !isConstant(input));
  return variable.length === 1 && variable[0] === node.input[0] ? variable[0] : undefined;
}

/** The head from `hidden` (excluded) to the logits: its nodes and initializers, or why it is not one. */
function collectHead(
  graph: NonNullable<ModelProto['graph']>, producer: ReadonlyMap<string, NodeProto>, initializers: ReadonlySet<string>, logitsName: string, hidden: string,
): LmHead | { readonly reason: string } {
  // The head: every node on the way from `hidden` (excluded) and the constants back to the logits.
  const needed = new Set<string>();
  const headNodes = new Set<NodeProto>();
  const usedInitializers = new Set<string>();
  const stack = [logitsName];
  while (stack.length > 0) {
    const name = stack.pop()!;
    if (name === '' || name === hidden || needed.has(name)) continue;
    needed.add(name);
    if (initializers.has(name)) {
      usedInitializers.add(name);
      continue;
    }
    const node = producer.get(name);
    if (node === undefined) return { reason: `the logits depend on ${name} (a graph input), not only on the hidden state` };
    if (node.attribute.some((a) => a.g !== undefined || a.graphs.length > 0)) return { reason: `the head holds a ${node.opType} with a subgraph` };
    headNodes.add(node);
    stack.push(...node.input);
  }
  return { hidden, logits: logitsName, nodes: graph.node.filter((node) => headNodes.has(node)), initializers: [...usedInitializers] };
}

/** The source model with the head's hidden state also returned, as output `hidden` (appended last). */
export function withHiddenOutput(model: ModelProto, head: LmHead): ModelProto {
  const copy = cloneModel(model);
  const graph = copy.graph!;
  if (!graph.output.some((output) => output.name === head.hidden)) {
    graph.output.push(create(ValueInfoProtoSchema, { name: head.hidden, type: floatTensorType(graph, head.hidden) }));
  }
  return copy;
}

/** The head alone: input the hidden state, output the logits, its nodes and initializers copied from the source. */
export function lmHeadModel(model: ModelProto, head: LmHead): ModelProto {
  const source = model.graph!;
  const keep = new Set(head.initializers);
  const graph = create(GraphProtoSchema, {
    name: `${source.name || 'graph'}_lm_head`,
    input: [create(ValueInfoProtoSchema, { name: head.hidden, type: floatTensorType(source, head.hidden) })],
    output: source.output.filter((output) => output.name === head.logits),
    node: [...head.nodes],
    initializer: source.initializer.filter((tensor) => keep.has(tensor.name)),
  });
  return cloneModel(createModel({
    irVersion: model.irVersion, opsetImport: model.opsetImport, producerName: 'kvscope lm-head-split', graph,
  }));
}

/** The hidden state's element type as the graph records it (value_info), float32 where it does not say. */
function floatTensorType(graph: GraphProto, name: string) {
  const recorded = [...graph.valueInfo, ...graph.output].find((info) => info.name === name)?.type;
  if (recorded !== undefined) return recorded;
  return create(TypeProtoSchema, { value: { case: 'tensorType', value: create(TypeProto_TensorSchema, { elemType: 1 }) } });
}

/** A graph whose LM head also takes hidden rows from outside, so one session serves as the model and its head. */
export interface HeadInputModel {
  readonly model: ModelProto;
  /** `[1, rows, hiddenSize]`: rows appended after the graph's own hidden state, before the head */
  readonly input: string;
  readonly hiddenSize: number;
}

/**
 * The model with its LM head fed the graph's own hidden state followed by the rows of a new input
 * `input`, `[1, rows, hiddenSize]` (Concat on the rows' axis): the logits of a run are the graph's
 * rows, then one row per fed hidden row. The compact reference recomputes stored hidden states this
 * way, on the session that already holds the weights, instead of a head session holding the head's
 * weight again (on a tied-embedding model the vocabulary × hidden matrix: 0.5 GiB at Qwen2.5-0.5B's
 * size, issue 23). Every other run feeds it zero rows (`[1, 0, hiddenSize]`: headInputDefault) and
 * computes exactly what the source computes. (Not an overridable initializer: onnxruntime-node lists
 * those among no inputs and drops their feeds.) Returns the reason instead when a head node's output
 * is read outside the head (rewiring it would change that reader).
 */
export function withHeadInput(model: ModelProto, head: LmHead): HeadInputModel | { readonly reason: string } {
  const copy = cloneModel(model);
  const graph = copy.graph!;
  const headNodes = new Set(head.nodes.map((node) => node.output.join('\u0000')));
  const inHead = (node: NodeProto): boolean => headNodes.has(node.output.join('\u0000'));
  const produced = new Set(graph.node.filter(inHead).flatMap((node) => node.output));
  for (const node of graph.node) {
    if (inHead(node)) continue;
    const reader = node.input.find((input) => produced.has(input));
    if (reader !== undefined) return { reason: `${reader}, computed by the LM head, is also read by ${node.opType} node ${node.name || node.output[0]}` };
  }
  const taken = new Set([...graph.input, ...graph.output, ...graph.valueInfo].map((info) => info.name)
    .concat(graph.initializer.map((tensor) => tensor.name), graph.node.flatMap((node) => [...node.input, ...node.output])));
  const fresh = (base: string): string => {
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
    taken.add(name);
    return name;
  };
  const input = fresh(`${head.hidden}_head_rows`);
  const joined = fresh(`${head.hidden}_with_head_rows`);
  const hiddenType = floatTensorType(graph, head.hidden);
  const hiddenSize = hiddenSizeOf(hiddenType) ?? projectionInputSize(graph, head);
  if (hiddenSize === null) return { reason: `the hidden state ${head.hidden} has no known last dimension` };
  for (const node of graph.node) {
    if (!inHead(node)) continue;
    node.input = node.input.map((name) => (name === head.hidden ? joined : name));
  }
  // Before the first head node that reads it (the head's constants may sit above the hidden state's producer).
  const at = graph.node.findIndex((node) => node.input.includes(joined));
  graph.node.splice(at, 0, create(NodeProtoSchema, {
    name: `${joined}_concat`, opType: 'Concat', input: [head.hidden, input], output: [joined],
    attribute: [intAttribute('axis', -2)],
  }));
  const elemType = hiddenType.value.case === 'tensorType' ? hiddenType.value.value.elemType : 1;
  graph.input.push(create(ValueInfoProtoSchema, {
    name: input,
    type: create(TypeProtoSchema, { value: { case: 'tensorType', value: create(TypeProto_TensorSchema, {
      elemType, shape: create(TensorShapeProtoSchema, { dim: [
        create(TensorShapeProto_DimensionSchema, { value: { case: 'dimValue', value: 1n } }),
        create(TensorShapeProto_DimensionSchema, { value: { case: 'dimParam', value: 'head_rows' } }),
        create(TensorShapeProto_DimensionSchema, { value: { case: 'dimValue', value: BigInt(hiddenSize) } }),
      ] }),
    }) } }),
  }));
  return { model: copy, input, hiddenSize };
}

function hiddenSizeOf(type: ReturnType<typeof floatTensorType>): number | null {
  if (type.value.case !== 'tensorType') return null;
  const last = type.value.value.shape?.dim.at(-1);
  return last?.value.case === 'dimValue' ? Number(last.value.value) : null;
}

/** The hidden size read off the head's projection weight: MatMul's `[hidden, vocab]`, Gemm's `[vocab, hidden]` with transB. */
function projectionInputSize(graph: GraphProto, head: LmHead): number | null {
  const weights = new Map(graph.initializer.map((tensor) => [tensor.name, tensor.dims.map(Number)]));
  for (const node of head.nodes) {
    if (!PROJECTIONS.has(node.opType)) continue;
    const dims = weights.get(node.input[1] ?? '');
    if (dims?.length !== 2) continue;
    const transposed = node.opType === 'Gemm' && node.attribute.some((a) => a.name === 'transB' && a.i === 1n);
    return transposed ? dims[1]! : dims[0]!;
  }
  return null;
}
