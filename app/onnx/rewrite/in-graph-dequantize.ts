import { create } from '@bufbuild/protobuf';
import { StringStringEntryProtoSchema, TensorProto_DataType as DataType, type ModelProto, type NodeProto, type ValueInfoProto } from 'onnx-buf';
import type { KvDtype } from '../../tensor/kv-tensor.js';
import { intAttribute } from '../attributes.js';
import type { OnnxDim } from '../graph-builder.js';
import { cloneModel } from '../onnx-model.js';
import { dequantizeFormatSide, graphFormatReason } from './dequantize-format-side.js';
import { dequantizeSide } from './dequantize-side.js';
import { GraphEditor } from './graph-editor.js';
import {
  IN_GRAPH_REWRITE_VERSION, codesAreInt32Words, inGraphUnsupportedReason,
  type InGraphDequantizeSpec, type InGraphKvIo, type InGraphLayerIo, type InGraphLayerSide, type InGraphLayerSpec, type InGraphSideIo,
  type UnpackStrategy,
} from './in-graph-spec.js';
import { findAttentionUse, findAttentionWeights, gateAfter, type AttentionUse } from './layer-gate.js';
import { GraphRewriteError } from './rewrite-error.js';

const INT64_MAX = 9_223_372_036_854_775_807n;

export interface InGraphRewrite {
  readonly model: ModelProto;
  readonly io: InGraphKvIo;
}

/**
 * Moves the dequantization of a quantized KV cache into the decoder graph (a pure function,
 * STYLE.md §16: the source is cloned, never mutated; every new name is derived from the source's).
 *
 * For each layer in `spec`, its `past_key_values.{i}.key|value` input becomes what transformers'
 * `QuantizedLayer` stores (spec §1.3, §3.6): `<past>.codes` (uint8, packed as the library packs
 * them), `<past>.scale` and `<past>.zero` (T, in the store's parameter shape) and `<past>.residual`
 * (T, the full-precision rows). Inside the graph, standard ONNX ops unpack and dequantize the store
 * exactly as kvscope's quantizers do (dequantize-side.ts), reshape it per the axis, append the
 * residual, and hand the result to the layer's attention under the past input's old name, so the
 * attention itself is the source's, node for node. The layer's `present.{i}.*` outputs are replaced
 * by `<present>.new_rows`: only the rows this run adds (an Optimum Concat's new input, through the
 * same value-preserving Casts the present went through; or, after a fused attention op, the present
 * sliced past the history), so the full-length present is never copied out of the graph.
 *
 * Each layer's dequantization is gated to start only once the previous layer's attention is done
 * (layer-gate.ts), so one layer's dequantized history is alive at a time. Layers not in `spec`
 * keep their past/present I/O unchanged.
 */
export function rewriteForInGraphDequantize(source: ModelProto, spec: InGraphDequantizeSpec): InGraphRewrite {
  if (source.graph === undefined) throw new GraphRewriteError('the model has no graph.', 'Open a complete ONNX decoder model.');
  checkSpec(spec);
  const model = cloneModel(source);
  const editor = new GraphEditor(model.graph!);
  const layers: InGraphLayerIo[] = [];
  let previous: string[] = [];
  const opset = Number(source.opsetImport.find((entry) => entry.domain === '' || entry.domain === 'ai.onnx')?.version ?? 0n);
  for (const layer of [...spec.layers].sort((a, b) => a.layer - b.layer)) {
    const scope = `/kvscope/layers.${layer.layer}`;
    // Found on the graph as it is before this layer changes, so every use still reads the past input.
    const keyUse = findAttentionUse(editor, layer.pastKey);
    const valueUse = findAttentionUse(editor, layer.pastValue);
    const key = rewriteSide(editor, spec.unpack, spec.gate !== false, opset, `${scope}/key`, layer, 'key', keyUse, previous);
    // the values wait for the keys' attention weights too (layer-gate.ts findAttentionWeights)
    const weights = valueUse?.concatenates === true
      ? findAttentionWeights(editor, valueUse.node.output[0]!, new Set(presentPath(editor, layer.presentValue, valueUse.node) ?? []))
      : null;
    const value = rewriteSide(editor, spec.unpack, spec.gate !== false, opset, `${scope}/value`, layer, 'value', valueUse, [...previous, ...(weights === null ? [] : [weights])]);
    layers.push({ layer: layer.layer, key: key.io, value: value.io, gated: key.gated && value.gated, valuesAfterKeys: weights !== null && value.waitsFor.includes(weights) });
    previous = [key.io.newRows, value.io.newRows];
  }
  editor.finish();
  model.metadataProps.push(create(StringStringEntryProtoSchema, {
    key: 'kvscope_in_graph_dequantize',
    value: JSON.stringify({ version: IN_GRAPH_REWRITE_VERSION, unpack: spec.unpack, layers: spec.layers.map(({ layer, dtype, key, value }) => ({ layer, dtype, key, value })) }),
  }));
  return { model, io: { layers } };
}

function rewriteSide(
  editor: GraphEditor, unpack: UnpackStrategy, gate: boolean, opset: number, scope: string, layer: InGraphLayerSpec, part: 'key' | 'value', use: AttentionUse | null, previous: readonly string[],
): { io: InGraphSideIo; gated: boolean; waitsFor: readonly string[] } {
  const past = part === 'key' ? layer.pastKey : layer.pastValue;
  const present = part === 'key' ? layer.presentKey : layer.presentValue;
  const side = part === 'key' ? layer.key : layer.value;
  const pastInfo = findValue(editor.graph.input, past, 'input');
  const presentInfo = findValue(editor.graph.output, present, 'output');
  checkDtype(pastInfo, layer.dtype);
  checkDtype(presentInfo, layer.dtype);

  // Only tensors that do not depend on this past may gate it (else the graph would wait on itself).
  const dependsOnPast = editor.downstream(past);
  const freshIsSafe = use !== null && !dependsOnPast.has(use.fresh);
  const after = gate ? [...(freshIsSafe ? [use.fresh] : []), ...previous.filter((tensor) => !dependsOnPast.has(tensor))] : [];

  const elemType = layer.dtype === 'float16' ? DataType.FLOAT16 : DataType.FLOAT;
  const dims = dimsOf(pastInfo);
  editor.removeInput(past);
  const format = side.backend === 'runtime-format';
  // A runtime format's rows `[tokens·kvHeads, rowBytes]` and its per-tensor fp32 scale; a store's codes, scale and zero.
  const io: InGraphSideIo = {
    codes: editor.addInput(editor.freshValueName(`${past}.codes`), !format && codesAreInt32Words(side) ? DataType.INT32 : DataType.UINT8, [`${past}.codes_rows`, `${past}.codes_cols`]),
    scale: format
      ? editor.addInput(editor.freshValueName(`${past}.scale`), DataType.FLOAT, [1])
      : editor.addInput(editor.freshValueName(`${past}.scale`), elemType, [`${past}.groups_rows`, `${past}.groups_cols`]),
    zero: format ? null : editor.addInput(editor.freshValueName(`${past}.zero`), elemType, [`${past}.groups_rows`, `${past}.groups_cols`]),
    residual: editor.addInput(editor.freshValueName(`${past}.residual`), elemType, [dims[0] ?? 'batch_size', side.kvHeads, 'residual_length', side.headDim]),
    newRows: editor.freshValueName(`${present}.new_rows`),
  };
  const gateTensor = after.length === 0 ? null : gateAfter(editor, `${scope}/gate`, after);
  const { history, tokens } = side.backend === 'runtime-format'
    ? dequantizeFormatSide({
      editor, scope, format: side.format, kvHeads: side.kvHeads, headDim: side.headDim, dtype: layer.dtype, codes: io.codes, tensorScale: io.scale, gate: gateTensor,
    })
    : dequantizeSide({ editor, scope, side, dtype: layer.dtype, unpack, opset, codes: io.codes, scale: io.scale, zero: io.zero!, gate: gateTensor });
  // Spliced only where the new rows can be taken from the Concat's own input (else present is sliced past a real past).
  if (use?.concatenates === true && castChain(editor, present, use.node) !== null) {
    spliceIntoConcat(editor, scope, use, history, io.residual, tokens, side);
  } else {
    editor.opNamed(scope, past, 'Concat', [history, io.residual], [intAttribute('axis', 2)]);
  }
  newRows(editor, scope, past, present, io.newRows, use);
  editor.removeOutput(present);
  editor.addOutput(io.newRows, elemType, [dimsOf(presentInfo)[0] ?? 'batch_size', side.kvHeads, 'new_tokens', side.headDim]);
  return { io, gated: gate && freshIsSafe, waitsFor: after };
}

/**
 * Optimum's `Concat(past, new)` becomes `Concat(history, residual, new)`: the history lands in the
 * attention's key (value) tensor in one copy, never first in a past tensor of its own. The
 * value-preserving Casts between the past and the Concat are applied to history and residual alike
 * (element-wise, so the same values); the Shape nodes that read the past (exporters take the past
 * length from it) read `[batch, kvHeads, storeTokens + residual, headDim]` computed from the inputs'
 * shapes instead, so nothing waits on a materialized past.
 */
function spliceIntoConcat(
  editor: GraphEditor, scope: string, use: AttentionUse, history: string, residual: string, storeTokens: string, side: InGraphLayerSide,
): void {
  const residualShape = editor.op(scope, 'Shape', [residual]);
  const residualTokens = editor.op(scope, 'Slice', [residualShape, editor.int64([2]), editor.int64([3]), editor.int64([0])]);
  const batchHeads = editor.op(scope, 'Slice', [residualShape, editor.int64([0]), editor.int64([2]), editor.int64([0])]);
  const pastShape = editor.op(scope, 'Concat', [batchHeads, editor.op(scope, 'Add', [storeTokens, residualTokens]), editor.int64([side.headDim])], [intAttribute('axis', 0)]);
  for (const reader of use.shapeReaders) {
    const start = reader.attribute.find((a) => a.name === 'start')?.i ?? 0n;
    const end = reader.attribute.find((a) => a.name === 'end')?.i ?? INT64_MAX;
    editor.removeNode(reader);
    editor.opNamed(scope, reader.output[0]!, 'Slice', [pastShape, editor.int64([start]), editor.int64([end]), editor.int64([0])]);
  }
  const through = (value: string): string => use.chain.reduce(
    (input, node) => (node.opType === 'Identity' ? input : editor.op(scope, node.opType, [input], node.attribute)), value);
  use.node.input.splice(0, 1, through(history), through(residual));
}

/**
 * The new rows as their own output. After an Optimum Concat(past, new), present is that Concat
 * passed through value-preserving Casts: the same Casts applied to `new` give exactly present's last
 * rows, and the full-length Cast chain is left with no reader (finish() drops it). Otherwise present
 * is sliced past the history's length.
 */
function newRows(editor: GraphEditor, scope: string, past: string, present: string, output: string, use: AttentionUse | null): void {
  // castChain still finds the Concat after a splice: only its inputs changed
  const chain = use?.concatenates === true ? castChain(editor, present, use.node) : null;
  if (use !== null && chain !== null) {
    let value = use.fresh;
    chain.forEach((cast, index) => {
      value = index === chain.length - 1
        ? editor.opNamed(scope, output, 'Cast', [value], cast.attribute)
        : editor.op(scope, 'Cast', [value], cast.attribute);
    });
    if (chain.length === 0) editor.opNamed(scope, output, 'Identity', [value]);
    return;
  }
  const pastShape = editor.op(scope, 'Shape', [past]);
  const pastLength = editor.op(scope, 'Slice', [pastShape, editor.int64([2]), editor.int64([3]), editor.int64([0])]);
  editor.opNamed(scope, output, 'Slice', [present, pastLength, editor.int64([INT64_MAX]), editor.int64([2])]);
}

/** The Casts from `concat`'s output to `present`, in order; null when present is anything else. */
function castChain(editor: GraphEditor, present: string, concat: NodeProto): NodeProto[] | null {
  return presentPath(editor, present, concat)?.filter((node) => node.opType === 'Cast') ?? null;
}

/** The Casts and Identities from `concat`'s output to `present`, in order; null when present is anything else. */
function presentPath(editor: GraphEditor, present: string, concat: NodeProto): NodeProto[] | null {
  const path: NodeProto[] = [];
  let value = present;
  for (let hops = 0; hops < 8; hops++) {
    const producer = editor.producer(value);
    if (producer === null) return null;
    if (producer === concat) return path.reverse();
    if ((producer.opType !== 'Cast' && producer.opType !== 'Identity') || producer.domain !== '' || producer.input.length !== 1) return null;
    path.push(producer);
    value = producer.input[0]!;
  }
  return null;
}

function checkSpec(spec: InGraphDequantizeSpec): void {
  const seen = new Set<number>();
  for (const layer of spec.layers) {
    if (seen.has(layer.layer)) throw new GraphRewriteError(`layer ${layer.layer} is listed twice.`, 'List each quantized layer once.');
    seen.add(layer.layer);
    for (const [part, side] of [['keys', layer.key], ['values', layer.value]] as const) {
      const reason = side.backend === 'runtime-format' ? graphFormatReason(side.format) : inGraphUnsupportedReason(side);
      if (reason !== null) {
        throw new GraphRewriteError(`layer ${layer.layer}'s ${part} cannot be dequantized inside the graph: ${reason}.`,
          'Run with --dequantize host (kvscope dequantizes in JavaScript and feeds the history), or choose settings the graph path supports.');
      }
      checkSide(layer.layer, part, side);
    }
  }
}

function checkSide(layer: number, part: string, side: InGraphLayerSide): void {
  const sizes: [string, number][] = [['kvHeads', side.kvHeads], ['headDim', side.headDim]];
  if (side.backend !== 'runtime-format') sizes.push(['groupSize', side.groupSize]);
  for (const [name, value] of sizes) {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new GraphRewriteError(`layer ${layer}'s ${part}: ${name} must be a positive integer, got ${value}.`, 'Check the model geometry and the cache settings.');
    }
  }
}

function findValue(values: readonly ValueInfoProto[], name: string, kind: 'input' | 'output'): ValueInfoProto {
  const info = values.find((value) => value.name === name);
  if (info === undefined) {
    throw new GraphRewriteError(`the graph has no ${kind} \`${name}\`.`, 'Rewrite with the I/O names the graph declares (its DecoderIo).');
  }
  return info;
}

function checkDtype(info: ValueInfoProto, dtype: KvDtype): void {
  const elemType = info.type?.value.case === 'tensorType' ? info.type.value.value.elemType : undefined;
  const expected = dtype === 'float16' ? DataType.FLOAT16 : DataType.FLOAT;
  if (elemType !== expected) {
    throw new GraphRewriteError(`\`${info.name}\` is not ${dtype} (ONNX element type ${String(elemType)}).`, 'Rewrite with the KV dtype the graph declares.');
  }
}

function dimsOf(info: ValueInfoProto): OnnxDim[] {
  if (info.type?.value.case !== 'tensorType') return [];
  return (info.type.value.value.shape?.dim ?? []).map((dim) => (dim.value.case === 'dimValue' ? Number(dim.value.value) : dim.value.case === 'dimParam' ? dim.value.value : '?'));
}
