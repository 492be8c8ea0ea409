import { TensorProto_DataType as DataType, type NodeProto } from 'onnx-buf';
import type { GraphHeader } from '../graph-header.js';
import { cloneModel, type ModelProto } from '../onnx-model.js';
import { GraphEditor } from './graph-editor.js';
import { GraphRewriteError } from './rewrite-error.js';

/** The input the rewrite adds: transformers' name in Optimum exports, which StepInputs already feeds. */
export const LOGITS_TO_KEEP_INPUT = 'num_logits_to_keep';
const EXISTING_NAMES = ['num_logits_to_keep', 'logits_to_keep'];
/** Bumped when the rewrite's output changes: derived graphs are cached under it (app/node/onnx/in-graph-model.ts). */
export const LOGITS_ROWS_REWRITE_VERSION = 1;

/** Row-wise ops that may sit between the LM head's product and `logits` (a bias, a softcap, a cast, a reshape back). */
const AFTER_HEAD = new Set(['Add', 'Sub', 'Mul', 'Div', 'Tanh', 'Cast', 'Reshape', 'Identity']);
/** What may flatten the hidden states before a 2-D Gemm head. */
const FLATTEN = new Set(['Flatten', 'Reshape']);

const INT64_MAX = 9_223_372_036_854_775_807n;

/** A node as the head search reads it: a NodeProto and a graph header's node summary both fit. */
interface SearchNode {
  readonly opType: string;
  readonly domain: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  /** a NodeProto's name, for messages (a header's summaries have none) */
  readonly name?: string;
}

/** What the head search reads of a graph: its nodes, outputs and constants, not one weight byte. */
export interface LogitsHeadGraph {
  readonly nodes: readonly SearchNode[];
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly initializers: ReadonlySet<string>;
}

/**
 * The hidden states [B, S, hidden] the LM head reads and the nodes that read them on the way to
 * `logits` (indices into `graph.nodes`), or why they cannot be found: from `logits` backwards,
 * through row-wise ops (bias, softcap, reshape back) to the MatMul or Gemm whose first input is the
 * hidden states (through a Flatten/Reshape for Gemm). Only the head's readers are given the last
 * rows (the head itself, a Shape that sizes its Reshape back); a reader that feeds another output
 * (a stub whose present is computed from the same states) keeps every row, and a reader that feeds
 * both `logits` and another output makes the cut impossible. `hasInput` is true when the graph
 * already takes num_logits_to_keep (nothing to derive).
 */
export function findLogitsHidden(graph: LogitsHeadGraph, logitsName = 'logits'):
  { readonly hidden: string; readonly readers: readonly number[] } | { readonly hasInput: true } | { readonly reason: string } {
  if (graph.inputs.some((input) => EXISTING_NAMES.includes(input))) return { hasInput: true };
  const producers = new Map<string, SearchNode>();
  const consumers = new Map<string, number[]>();
  graph.nodes.forEach((node, index) => {
    for (const output of node.outputs) if (output !== '') producers.set(output, node);
    for (const input of node.inputs) if (input !== '') consumers.set(input, [...(consumers.get(input) ?? []), index]);
  });
  const producer = (value: string): SearchNode | null => producers.get(value) ?? null;
  if (!graph.outputs.includes(logitsName)) return { reason: `the graph has no output ${logitsName}` };
  let node = producer(logitsName);
  while (node !== null && node.opType !== 'MatMul' && node.opType !== 'Gemm') {
    if (!AFTER_HEAD.has(node.opType) || node.domain !== '') return { reason: `${describe(node)} is not a row-wise op` };
    const data = dataInput(node, graph.initializers, producer);
    if (typeof data !== 'string') return data;
    node = producer(data);
  }
  if (node === null) return { reason: 'no MatMul or Gemm produces it' };
  let hidden = node.inputs[0]!;
  const flatten = producer(hidden);
  if (node.opType === 'Gemm' && flatten !== null && FLATTEN.has(flatten.opType)) hidden = flatten.inputs[0]!;
  if (graph.outputs.includes(hidden)) return { reason: `its input ${hidden} is also a graph output` };
  const feedsLogits = ancestorsOf(logitsName, producer);
  const otherOutputs = new Set(graph.outputs.filter((output) => output !== logitsName));
  const readers = (consumers.get(hidden) ?? []).filter((index) => feedsLogits.has(graph.nodes[index]!));
  for (const index of readers) {
    if (reaches(graph.nodes[index]!, otherOutputs, graph.nodes, consumers)) {
      return { reason: `${describe(graph.nodes[index]!)} reads the hidden states ${hidden} for ${logitsName} and for another output` };
    }
  }
  return { hidden, readers };
}

/** Every node `value` is computed from, directly or not. */
function ancestorsOf(value: string, producer: (value: string) => SearchNode | null): Set<SearchNode> {
  const nodes = new Set<SearchNode>();
  const pending = [value];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    const node = producer(name);
    if (node === null || nodes.has(node)) continue;
    nodes.add(node);
    pending.push(...node.inputs.filter((input) => input !== ''));
  }
  return nodes;
}

/** Whether any of `targets` is computed from `node`'s outputs. */
function reaches(node: SearchNode, targets: ReadonlySet<string>, nodes: readonly SearchNode[], consumers: ReadonlyMap<string, readonly number[]>): boolean {
  const seen = new Set<string>();
  const pending = [...node.outputs];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (name === '' || seen.has(name)) continue;
    if (targets.has(name)) return true;
    seen.add(name);
    for (const index of consumers.get(name) ?? []) pending.push(...nodes[index]!.outputs);
  }
  return false;
}

/** The head search on a graph header (read without its weights): whether a run can derive the last-rows graph, before loading it. */
export function logitsHeadOfHeader(header: GraphHeader, logitsName = 'logits'): ReturnType<typeof findLogitsHidden> {
  return findLogitsHidden({
    nodes: header.nodes,
    inputs: header.inputs.map((input) => input.name),
    outputs: header.outputs.map((output) => output.name),
    initializers: new Set(header.initializers.map((tensor) => tensor.name)),
  }, logitsName);
}

/**
 * The graph with a `num_logits_to_keep` input (int64 scalar, transformers' `logits_to_keep`): the
 * final hidden states [B, S, hidden] are sliced to their last k rows before the LM head, so a
 * generation step computes one vocabulary row instead of S (at a 152k vocabulary, a 2,048-token
 * prefill's logits are 1.24 GB of float32) and eval only the rows it scores. The rows computed are
 * the same products as the source's (each logits row depends on its own hidden row only); the test
 * compares them bit for bit. A graph that already takes the input is returned unchanged; the source
 * is never mutated (STYLE.md §16). The head is found by findLogitsHidden.
 */
export function keepLogitsRows(source: ModelProto, logitsName = 'logits'): ModelProto {
  const sourceGraph = source.graph;
  if (sourceGraph === undefined) throw new GraphRewriteError('the model has no graph.', 'Export the model again.');
  const found = findLogitsHidden({
    nodes: sourceGraph.node.map((node) => ({ opType: node.opType, domain: node.domain, inputs: node.input, outputs: node.output, name: node.name })),
    inputs: sourceGraph.input.map((input) => input.name),
    outputs: sourceGraph.output.map((output) => output.name),
    initializers: new Set(sourceGraph.initializer.map((tensor) => tensor.name)),
  }, logitsName);
  if ('hasInput' in found) return source;
  if ('reason' in found) {
    throw new GraphRewriteError(`cannot find the LM head before \`${logitsName}\`: ${found.reason}.`,
      'Run without the logits-rows rewrite (every row is computed), or export the model with a num_logits_to_keep input.');
  }
  const { hidden } = found;
  const model = cloneModel(source);
  const editor = new GraphEditor(model.graph!);
  const graph = editor.graph;
  // the clone keeps the source's node order until finish() sorts it
  const readers = found.readers.map((index) => graph.node[index]!);

  const keep = editor.addInput(LOGITS_TO_KEEP_INPUT, DataType.INT64, []);
  const scope = '/kvscope/logits_rows';
  const start = editor.op(scope, 'Neg', [editor.op(scope, 'Reshape', [keep, editor.int64([1])])]); // [1]: -k
  const lastRows = editor.op(scope, 'Slice', [hidden, start, editor.int64([INT64_MAX]), editor.int64([1])]); // [B, k, hidden]
  for (const reader of readers) reader.input = reader.input.map((name) => (name === hidden ? lastRows : name));

  const logits = graph.output.find((output) => output.name === logitsName)!;
  const dims = logits.type?.value.case === 'tensorType' ? logits.type.value.value.shape?.dim : undefined;
  if (dims !== undefined && dims.length === 3) dims[1]!.value = { case: 'dimParam', value: LOGITS_TO_KEEP_INPUT };
  editor.finish();
  return model;
}

/** The one input of a row-wise op that carries the rows: the data input of a Reshape, else the one non-constant input. */
function dataInput(node: SearchNode, constants: ReadonlySet<string>, producer: (value: string) => SearchNode | null): string | { reason: string } {
  if (node.opType === 'Reshape') return node.inputs[0]!;
  const computed = node.inputs.filter((name) => name !== '' && !constants.has(name) && producer(name)?.opType !== 'Constant');
  if (computed.length !== 1) return { reason: `${describe(node)} has ${computed.length} computed inputs, not one row input` };
  return computed[0]!;
}

/** A node as a message names it: `name (OpType)`, or by its output where it has no name (a header's nodes). */
function describe(node: SearchNode): string {
  return node.name !== undefined && node.name !== '' ? `${node.name} (${node.opType})` : `the ${node.opType} node writing ${node.outputs[0] ?? 'nothing'}`;
}

/** Inputs that choose how many rows of logits a graph computes (transformers' num_logits_to_keep). */
const KEEP_INPUTS = new Set(['num_logits_to_keep', 'logits_to_keep']);

/**
 * The tensor `hidden` is the kept rows of: the data of the Slice that makes it, where that Slice's
 * bounds are computed from a num_logits_to_keep input (logits-rows.ts, Optimum exports); null otherwise.
 */
export function keptRowsSource(model: ModelProto, hidden: string): string | null {
  const graph = model.graph!;
  const producer = new Map<string, NodeProto>();
  for (const node of graph.node) for (const output of node.output) producer.set(output, node);
  const slice = producer.get(hidden);
  if (slice?.opType !== 'Slice' || slice.input[0] === undefined || !producer.has(slice.input[0])) return null;
  const seen = new Set<string>();
  const readsKeep = (name: string): boolean => {
    if (KEEP_INPUTS.has(name)) return graph.input.some((input) => input.name === name);
    if (seen.has(name)) return false;
    seen.add(name);
    return producer.get(name)?.input.some(readsKeep) ?? false;
  };
  return slice.input.slice(1).some(readsKeep) ? slice.input[0] : null;
}
