import { TensorProto_DataType as DataType, type NodeProto } from 'onnx-buf';
import { cloneModel, type ModelProto } from '../onnx-model.js';
import { GraphEditor } from './graph-editor.js';
import { GraphRewriteError } from './rewrite-error.js';

/** The input the rewrite adds: transformers' name in Optimum exports, which StepInputs already feeds. */
export const LOGITS_TO_KEEP_INPUT = 'num_logits_to_keep';
const EXISTING_NAMES = ['num_logits_to_keep', 'logits_to_keep'];

/** Row-wise ops that may sit between the LM head's product and `logits` (a bias, a softcap, a cast, a reshape back). */
const AFTER_HEAD = new Set(['Add', 'Sub', 'Mul', 'Div', 'Tanh', 'Cast', 'Reshape', 'Identity']);
/** What may flatten the hidden states before a 2-D Gemm head. */
const FLATTEN = new Set(['Flatten', 'Reshape']);

const INT64_MAX = 9_223_372_036_854_775_807n;

/**
 * The graph with a `num_logits_to_keep` input (int64 scalar, transformers' `logits_to_keep`): the
 * final hidden states [B, S, hidden] are sliced to their last k rows before the LM head, so a
 * generation step computes one vocabulary row instead of S (at a 152k vocabulary, a 2,048-token
 * prefill's logits are 1.24 GB of float32) and eval only the rows it scores. The rows computed are
 * the same products as the source's (each logits row depends on its own hidden row only); the test
 * compares them bit for bit. A graph that already takes the input is returned unchanged; the source
 * is never mutated (STYLE.md §16).
 *
 * The head is found from `logits` backwards, through row-wise ops (bias, softcap, reshape back) to
 * the MatMul or Gemm whose first input is the hidden states (through a Flatten/Reshape for Gemm).
 */
export function keepLogitsRows(source: ModelProto, logitsName = 'logits'): ModelProto {
  const sourceGraph = source.graph;
  if (sourceGraph === undefined) throw new GraphRewriteError('the model has no graph.', 'Export the model again.');
  if (sourceGraph.input.some((input) => EXISTING_NAMES.includes(input.name))) return source;
  const model = cloneModel(source);
  const editor = new GraphEditor(model.graph!);
  const graph = editor.graph;
  const constants = new Set(graph.initializer.map((tensor) => tensor.name));
  const notFound = (why: string) => new GraphRewriteError(`cannot find the LM head before \`${logitsName}\`: ${why}.`,
    'Run without the logits-rows rewrite (every row is computed), or export the model with a num_logits_to_keep input.');

  if (!graph.output.some((output) => output.name === logitsName)) throw notFound(`the graph has no output ${logitsName}`);
  let node = editor.producer(logitsName);
  while (node !== null && node.opType !== 'MatMul' && node.opType !== 'Gemm') {
    if (!AFTER_HEAD.has(node.opType) || node.domain !== '') throw notFound(`${node.name} (${node.opType}) is not a row-wise op`);
    node = editor.producer(dataInput(node, constants, editor));
  }
  if (node === null) throw notFound('no MatMul or Gemm produces it');
  let hidden = node.input[0]!;
  const flatten = editor.producer(hidden);
  if (node.opType === 'Gemm' && flatten !== null && FLATTEN.has(flatten.opType)) hidden = flatten.input[0]!;
  if (graph.output.some((output) => output.name === hidden)) throw notFound(`its input ${hidden} is also a graph output`);
  const readers = editor.consumers(hidden);

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
function dataInput(node: NodeProto, constants: ReadonlySet<string>, editor: GraphEditor): string {
  if (node.opType === 'Reshape') return node.input[0]!;
  const computed = node.input.filter((name) => name !== '' && !constants.has(name) && !isConstantNode(editor.producer(name)));
  if (computed.length !== 1) {
    throw new GraphRewriteError(`cannot follow ${node.name} (${node.opType}) back to the LM head: it has ${computed.length} computed inputs.`,
      'Run without the logits-rows rewrite, or export the model with a num_logits_to_keep input.');
  }
  return computed[0]!;
}

function isConstantNode(node: NodeProto | null): boolean {
  return node !== null && node.opType === 'Constant';
}
