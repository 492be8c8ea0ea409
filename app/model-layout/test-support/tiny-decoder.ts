import { OnnxDataType } from '../../onnx/element-types.js';
import { graphAttribute, intAttribute, intsAttribute } from '../../onnx/attributes.js';
import { GraphBuilder, type GraphScope, type OnnxDim } from '../../onnx/graph-builder.js';
import { createModel, type ModelProto } from '../../onnx/onnx-model.js';
import { attentionBias } from '../../synthetic/attention-bias.js';
import { SeededRandom } from '../../synthetic/seeded-random.js';
import { nameFor } from '../../engine/name-pattern.js';
import { OPTIMUM_NAMING, type IoNaming } from '../../engine/io-naming.js';

/**
 * Tiny random-weight decoders in every I/O layout researchers bring, written with kvscope's graph
 * builder: the same weights (by seed) behind Optimum's names, GPT-2's combined past, int32 inputs,
 * fp16 KV and logits, a merged decoder (`use_cache_branch` and an If node), the legacy pair,
 * LFM2-like conv states that the logits depend on, genai share-buffer presents, and the inputs
 * kvscope refuses. Layers attend over the past with a causal mask, so a cache fed wrongly changes
 * the greedy ids; positions are embedded, so wrong position ids do too.
 */
export interface TinyDecoderOptions {
  readonly layers: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly vocab: number;
  readonly seed: number;
  readonly naming: IoNaming;
  /** ids, mask and positions */
  readonly idsType: 'int64' | 'int32';
  readonly kvType: 'float32' | 'float16' | 'bfloat16' | 'uint8';
  readonly logitsType: 'float32' | 'float16';
  /** false: Optimum's decoder_model.onnx, no past inputs (the prefill graph of the legacy pair) */
  readonly withPast: boolean;
  /** Optimum's decoder_model_merged.onnx: `use_cache_branch` selects an If branch with or without past */
  readonly merged: boolean;
  /** layers that are LFM2-like short convolutions with a state (`naming.states[0]`), not attention */
  readonly convLayers: readonly number[];
  /** the conv state's length (LFM2's L_cache) */
  readonly convWidth: number;
  /** the decoder takes `inputs_embeds` instead of `input_ids` */
  readonly inputsEmbeds: boolean;
  /** presents come back this many rows longer than past + new (genai share-buffer graphs), rows of zeros */
  readonly presentPadding: number;
  /** inputs the graph declares and ignores (paged attention, static caches: what kvscope must refuse) */
  readonly extraInputs: readonly { readonly name: string; readonly type: OnnxDataType; readonly shape: readonly OnnxDim[] }[];
  /** the graph also declares `position_ids` (default true) */
  readonly positionIds: boolean;
  /** `plain` ONNX attention ops, or onnxruntime's GroupQueryAttention contrib op (the model builder's) */
  readonly attention: 'plain' | 'gqa';
}

export const TINY_DEFAULTS: TinyDecoderOptions = {
  layers: 2, kvHeads: 2, headDim: 8, vocab: 61, seed: 7,
  naming: OPTIMUM_NAMING, idsType: 'int64', kvType: 'float32', logitsType: 'float32',
  withPast: true, merged: false, convLayers: [], convWidth: 4, inputsEmbeds: false, presentPadding: 0, extraInputs: [], positionIds: true,
  attention: 'plain',
};

const MAX_POSITIONS = 64;
const BATCH = 'batch_size';
const SEQUENCE = 'sequence_length';
const PAST = 'past_sequence_length';
const TOTAL = 'total_sequence_length';

const ELEMENT: Readonly<Record<TinyDecoderOptions['kvType'] | 'int64' | 'int32', OnnxDataType>> = {
  float32: OnnxDataType.FLOAT, float16: OnnxDataType.FLOAT16, bfloat16: OnnxDataType.BFLOAT16, uint8: OnnxDataType.UINT8,
  int64: OnnxDataType.INT64, int32: OnnxDataType.INT32,
};

export function tinyDecoder(overrides: Partial<TinyDecoderOptions> = {}): ModelProto {
  const o: TinyDecoderOptions = { ...TINY_DEFAULTS, ...overrides };
  const g = new GraphBuilder();
  const n = o.naming;
  const hidden = o.kvHeads * o.headDim;
  const kvElement = ELEMENT[o.kvType];
  const tokens = o.inputsEmbeds
    ? g.input(n.inputsEmbeds, OnnxDataType.FLOAT, [BATCH, SEQUENCE, hidden])
    : g.input(n.inputIds, ELEMENT[o.idsType], [BATCH, SEQUENCE]);
  const mask = g.input(n.attentionMask, ELEMENT[o.idsType], [BATCH, TOTAL]);
  const positions = o.positionIds ? g.input(n.positionIds, ELEMENT[o.idsType], [BATCH, SEQUENCE]) : null;
  const attentionLayers = range(o.layers).filter((layer) => !o.convLayers.includes(layer));
  const pastInputs = new Map<number, string>();
  if (o.withPast) {
    for (const layer of attentionLayers) {
      if (n.kv.packing === 'combined') {
        pastInputs.set(layer, g.input(nameFor(n.kv.past, layer), kvElement, [2, BATCH, o.kvHeads, PAST, o.headDim]));
      } else {
        g.input(nameFor(n.kv.pastKey, layer), kvElement, [BATCH, o.kvHeads, PAST, o.headDim]);
        g.input(nameFor(n.kv.pastValue, layer), kvElement, [BATCH, o.kvHeads, PAST, o.headDim]);
      }
    }
  }
  const state = n.states[0];
  if (o.convLayers.length > 0 && state === undefined) throw new RangeError('conv layers need naming.states[0] (past_conv.%d → present_conv.%d)');
  for (const layer of o.convLayers) g.input(nameFor(state!.past, layer), OnnxDataType.FLOAT, [BATCH, hidden, o.convWidth]);
  const useCacheBranch = o.merged ? g.input(n.useCacheBranch, OnnxDataType.BOOL, [1]) : null;
  for (const extra of o.extraInputs) g.input(extra.name, extra.type, extra.shape);

  const presentDims = (): OnnxDim[] => (n.kv.packing === 'combined' ? [2, BATCH, o.kvHeads, TOTAL, o.headDim] : [BATCH, o.kvHeads, TOTAL, o.headDim]);
  const outputs: { name: string; type: OnnxDataType; dims: OnnxDim[] }[] = [
    { name: n.logits, type: o.logitsType === 'float16' ? OnnxDataType.FLOAT16 : OnnxDataType.FLOAT, dims: [BATCH, SEQUENCE, o.vocab] },
  ];
  for (const layer of attentionLayers) {
    if (n.kv.packing === 'combined') outputs.push({ name: nameFor(n.kv.present, layer), type: kvElement, dims: presentDims() });
    else {
      outputs.push({ name: nameFor(n.kv.presentKey[0]!, layer), type: kvElement, dims: presentDims() });
      outputs.push({ name: nameFor(n.kv.presentValue[0]!, layer), type: kvElement, dims: presentDims() });
    }
  }
  for (const layer of o.convLayers) outputs.push({ name: nameFor(state!.present, layer), type: OnnxDataType.FLOAT, dims: [BATCH, hidden, o.convWidth] });
  for (const output of outputs) g.output(output.name, output.type, output.dims);

  const inputs: BodyInputs = { tokens, mask, positions, pastInputs };
  if (useCacheBranch === null) {
    decoderBody(g, g.at('/model'), o, inputs, outputs.map((output) => output.name), !o.withPast);
  } else {
    // Optimum's merged decoder: both branches compute the same model; the else branch ignores the past inputs.
    const branch = (name: string, emptyPast: boolean): ReturnType<GraphBuilder['build']> => {
      const b = new GraphBuilder();
      const branchOutputs = outputs.map((output) => `/${name}/${output.name}`);
      decoderBody(b, b.at(`/${name}`), o, inputs, branchOutputs, emptyPast, `/${name}`);
      for (const [i, output] of outputs.entries()) b.output(branchOutputs[i]!, output.type, output.dims);
      return b.build(`${name}_branch`, '');
    };
    g.addNode('/model', 'If', [useCacheBranch], [
      graphAttribute('then_branch', branch('with_past', false)),
      graphAttribute('else_branch', branch('no_past', true)),
    ], outputs.map((output) => output.name));
  }
  return createModel({
    irVersion: 8n,
    producerName: 'kvscope-test',
    graph: g.build('tiny_decoder', 'kvscope test fixture'),
    opsetImport: [{ domain: '', version: 17n }, ...(o.attention === 'gqa' ? [{ domain: 'com.microsoft', version: 1n }] : [])],
  });
}

interface BodyInputs {
  readonly tokens: string;
  readonly mask: string;
  readonly positions: string | null;
  /** combined packing: the past_N input per attention layer */
  readonly pastInputs: ReadonlyMap<number, string>;
}

/** The model itself; `outputNames` in the order logits, presents (per layer: key/value or combined), conv states. */
function decoderBody(
  g: GraphBuilder, scope: GraphScope, o: TinyDecoderOptions, inputs: BodyInputs, outputNames: readonly string[], emptyPast: boolean, prefix = '',
): void {
  const n = o.naming;
  const hidden = o.kvHeads * o.headDim;
  const weight = (name: string, dims: number[], bound: number): string => {
    const values = new SeededRandom(o.seed, name).fillUniform(new Float32Array(dims.reduce((a, b) => a * b, 1)), bound);
    return g.initializer(`${prefix}/${name}`, dims, values);
  };
  const kvElement = ELEMENT[o.kvType];
  const toFloat = (value: string): string => (o.kvType === 'float32' ? value : scope.op('Cast', [value], [intAttribute('to', OnnxDataType.FLOAT)]));
  const toKv = (value: string): string => (o.kvType === 'float32' ? value : scope.op('Cast', [value], [intAttribute('to', kvElement)]));
  let emptyPastName: string | null = null;
  const empty = (): string => (emptyPastName ??= g.initializer(`${prefix}/empty_past`, [1, o.kvHeads, 0, o.headDim], emptyOf(o.kvType)));

  let h = o.inputsEmbeds ? inputs.tokens : scope.op('Gather', [weight('embed', [o.vocab, hidden], 1), inputs.tokens]); // [B, S, hidden]
  if (inputs.positions !== null) h = scope.op('Add', [h, scope.op('Gather', [weight('positions', [MAX_POSITIONS, hidden], 1), inputs.positions])]);
  let output = 1;
  let biasPast: string | null = null;
  let bias: string | null = null;
  for (let layer = 0; layer < o.layers; layer++) {
    const at = scope.at(`layers.${layer}`);
    if (o.convLayers.includes(layer)) {
      // LFM2-like short convolution: its state is the last `convWidth` inputs, and its output mixes them in.
      const state = nameFor(n.states[0]!.past, layer);
      const xt = at.op('Transpose', [h], [intsAttribute('perm', [0, 2, 1])]); // [B, hidden, S]
      const xcat = at.op('Concat', [state, xt], [intAttribute('axis', 2)]); // [B, hidden, K + S]
      const kernel = weight(`conv.${layer}`, [hidden, 1, o.convWidth + 1], 0.8);
      const y = at.op('Conv', [xcat, kernel], [intAttribute('group', hidden)]); // [B, hidden, S]
      h = at.op('Add', [h, at.op('Tanh', [at.op('Transpose', [y], [intsAttribute('perm', [0, 2, 1])])])]);
      const presentState = outputNames[outputNames.length - o.convLayers.length + o.convLayers.indexOf(layer)]!;
      at.opNamed(presentState, 'Slice', [xcat, g.int64([-o.convWidth]), g.int64([MAX_POSITIONS * 1024]), g.int64([2])]);
      continue;
    }
    let pastKey: string;
    let pastValue: string;
    if (emptyPast) {
      pastKey = empty();
      pastValue = pastKey;
    } else if (n.kv.packing === 'combined') {
      const past = inputs.pastInputs.get(layer)!;
      pastKey = at.op('Gather', [past, g.int64([0], [])], [intAttribute('axis', 0)]);
      pastValue = at.op('Gather', [past, g.int64([1], [])], [intAttribute('axis', 0)]);
    } else {
      pastKey = nameFor(n.kv.pastKey, layer);
      pastValue = nameFor(n.kv.pastValue, layer);
    }
    if (bias === null || biasPast === null) {
      biasPast = pastKey;
      bias = attentionBias(scope.at('mask'), { inputIds: inputs.tokens, attentionMask: inputs.mask, pastKey }, 1, null); // [B, 1, S, T]
    }
    const project = (name: string): string => at.op('MatMul', [h, weight(`${name}.${layer}`, [hidden, hidden], 0.6)]); // [B, S, hidden]
    let presentKey: string;
    let presentValue: string;
    let merged: string;
    if (o.attention === 'gqa') {
      // The model builder's attention: GroupQueryAttention takes [B, S, heads·d] projections and the
      // BNSH past, masks causally itself and returns present = [past | new] (onnxruntime contrib op).
      const lengths = gqaLengths(g, scope, inputs.mask);
      [merged, presentKey, presentValue] = at.domainOps('com.microsoft', 'GroupQueryAttention',
        [project('q'), project('k'), project('v'), pastKey, pastValue, lengths.seqlensK, lengths.total], 3,
        [intAttribute('num_heads', o.kvHeads), intAttribute('kv_num_heads', o.kvHeads)]) as [string, string, string];
    } else {
      const heads = (name: string): string => at.op('Transpose', [
        at.op('Reshape', [project(name), g.int64([0, 0, o.kvHeads, o.headDim])]),
      ], [intsAttribute('perm', [0, 2, 1, 3])]); // [B, heads, S, d]
      const q = heads('q');
      const k = heads('k');
      const v = heads('v');
      presentKey = at.op('Concat', [pastKey, toKv(k)], [intAttribute('axis', 2)]); // [B, heads, T, d] in the KV type
      presentValue = at.op('Concat', [pastValue, toKv(v)], [intAttribute('axis', 2)]);
      const scores = at.op('Add', [
        at.op('Mul', [at.op('MatMul', [q, at.op('Transpose', [toFloat(presentKey)], [intsAttribute('perm', [0, 1, 3, 2])])]), g.float(1 / Math.sqrt(o.headDim))]),
        bias,
      ]);
      const context = at.op('MatMul', [at.op('Softmax', [scores], [intAttribute('axis', -1)]), toFloat(presentValue)]); // [B, heads, S, d]
      merged = at.op('Reshape', [at.op('Transpose', [context], [intsAttribute('perm', [0, 2, 1, 3])]), g.int64([0, 0, hidden])]);
    }
    h = at.op('Add', [h, at.op('MatMul', [merged, weight(`o.${layer}`, [hidden, hidden], 0.6)])]);
    const padded = (present: string): string => (o.presentPadding === 0 ? present : at.op('Concat', [
      present, g.initializer(`${prefix}/padding.${layer}.${output}`, [1, o.kvHeads, o.presentPadding, o.headDim], zerosOf(o.kvType, o.kvHeads * o.presentPadding * o.headDim)),
    ], [intAttribute('axis', 2)]));
    if (n.kv.packing === 'combined') {
      const unsqueeze = (x: string): string => at.op('Unsqueeze', [padded(x), g.int64([0])]);
      at.opNamed(outputNames[output++]!, 'Concat', [unsqueeze(presentKey), unsqueeze(presentValue)], [intAttribute('axis', 0)]);
    } else {
      at.opNamed(outputNames[output++]!, 'Identity', [padded(presentKey)]);
      at.opNamed(outputNames[output++]!, 'Identity', [padded(presentValue)]);
    }
  }
  const logits = scope.op('MatMul', [scope.op('Tanh', [h]), weight('lm_head', [hidden, o.vocab], 2)]);
  if (o.logitsType === 'float16') scope.opNamed(outputNames[0]!, 'Cast', [logits], [intAttribute('to', OnnxDataType.FLOAT16)]);
  else scope.opNamed(outputNames[0]!, 'Identity', [logits]);
}

/** GroupQueryAttention's lengths from the mask, as the model builder computes them: seqlens_k = Σmask - 1, total = mask length (int32). */
const gqaLengthsByGraph = new WeakMap<GraphBuilder, { seqlensK: string; total: string }>();
function gqaLengths(g: GraphBuilder, scope: GraphScope, mask: string): { seqlensK: string; total: string } {
  let lengths = gqaLengthsByGraph.get(g);
  if (lengths === undefined) {
    const int32 = [intAttribute('to', OnnxDataType.INT32)];
    const sum = scope.op('ReduceSum', [scope.op('Cast', [mask], [intAttribute('to', OnnxDataType.INT64)]), g.int64([1])], [intAttribute('keepdims', 0)]); // [B]
    const seqlensK = scope.op('Cast', [scope.op('Sub', [sum, g.int64([1], [])])], int32);
    const total = scope.op('Cast', [scope.op('Squeeze', [scope.op('Shape', [mask], [intAttribute('start', 1), intAttribute('end', 2)]), g.int64([0])])], int32);
    lengths = { seqlensK, total };
    gqaLengthsByGraph.set(g, lengths);
  }
  return lengths;
}

function range(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i);
}

function emptyOf(type: TinyDecoderOptions['kvType']): Float32Array | Uint16Array | Uint8Array {
  return type === 'float32' ? new Float32Array(0) : type === 'uint8' ? new Uint8Array(0) : new Uint16Array(0);
}

function zerosOf(type: TinyDecoderOptions['kvType'], count: number): Float32Array | Uint16Array | Uint8Array {
  return type === 'float32' ? new Float32Array(count) : type === 'uint8' ? new Uint8Array(count) : new Uint16Array(count);
}
