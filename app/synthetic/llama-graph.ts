import { attentionBias } from './attention-bias.js';
import { gatedMlp } from './gated-mlp.js';
import { GraphBuilder } from '../onnx/graph-builder.js';
import { groupedQueryAttention } from './grouped-query-attention.js';
import type { LlamaWeights, WeightData } from './llama-weights.js';
import { OnnxDataType } from '../onnx/element-types.js';
import { createModel, type ModelProto } from '../onnx/onnx-model.js';
import { intAttribute } from '../onnx/attributes.js';
import { rmsNorm } from './rms-norm.js';
import { rotaryTables } from './rotary-embedding.js';
import { SYNTHETIC_FORMAT_VERSION, type SyntheticLayerType, type SyntheticModelSpec } from './synthetic-spec.js';

/** opset 17 (ONNX 1.12, IR version 8): the opset of HF/Optimum's Llama exports, which ORT's CPU and WebGPU EPs cover. */
export const SYNTHETIC_OPSET = 17;
const IR_VERSION = 8;

// The symbolic dimension names of an Optimum "decoder with past" export, as in stories260k.
const BATCH = 'batch_size';
const SEQUENCE = 'sequence_length';
const PAST = 'past_sequence_length';
const TOTAL = 'past_sequence_length + sequence_length';

const TRANSPOSED = '[in, out]: the transpose of the nn.Linear weight, so MatMul needs no Transpose';

/**
 * The Llama decoder as one ONNX graph with the I/O signature of an HF/Optimum decoder-with-past
 * export (stories260k's):
 *   inputs  input_ids [B, S], attention_mask [B, P+S], position_ids [B, S] (int64),
 *           past_key_values.{i}.key|value [B, kvHeads, P, headDim] (float32);
 *   outputs logits [B, S, vocab], present.{i}.key|value [B, kvHeads, P+S, headDim].
 * Keys are stored after RoPE, as HF caches them. Every layer's past must have the same length P;
 * sliding-window layers mask beyond their window, they do not crop their cache.
 */
export function buildLlamaModel(spec: SyntheticModelSpec, weights: LlamaWeights): ModelProto {
  const g = new GraphBuilder();
  const { hiddenSize: hidden, headDim, numKeyValueHeads: kvHeads } = spec;
  const inputIds = g.input('input_ids', OnnxDataType.INT64, [BATCH, SEQUENCE]);
  const attentionMask = g.input('attention_mask', OnnxDataType.INT64, [BATCH, TOTAL]);
  const positionIds = g.input('position_ids', OnnxDataType.INT64, [BATCH, SEQUENCE]);
  const past = Array.from({ length: spec.numLayers }, (_, i) => ({
    key: g.input(`past_key_values.${i}.key`, OnnxDataType.FLOAT, [BATCH, kvHeads, PAST, headDim]),
    value: g.input(`past_key_values.${i}.value`, OnnxDataType.FLOAT, [BATCH, kvHeads, PAST, headDim]),
  }));
  g.output('logits', OnnxDataType.FLOAT, [BATCH, SEQUENCE, spec.vocabSize]);
  for (let i = 0; i < spec.numLayers; i++) {
    g.output(`present.${i}.key`, OnnxDataType.FLOAT, [BATCH, kvHeads, TOTAL, headDim]);
    g.output(`present.${i}.value`, OnnxDataType.FLOAT, [BATCH, kvHeads, TOTAL, headDim]);
  }

  const put = (name: string, dims: readonly number[], data: WeightData, docString?: string): string =>
    data instanceof Float32Array ? g.initializer(name, dims, data, docString) : g.externalInitializer(name, dims, data, docString);
  const model = g.at('/model');
  const embedTokens = put('model.embed_tokens.weight', [spec.vocabSize, hidden], weights.embedTokens);
  let hiddenStates = model.at('embed_tokens').op('Gather', [embedTokens, inputIds]); // [B, S, hidden]
  const rotary = rotaryTables(model.at('rotary_emb'), positionIds, headDim, spec.ropeTheta);

  const groupSize = spec.numAttentionHeads / kvHeads;
  const biasInputs = { inputIds, attentionMask, pastKey: past[0].key };
  const biases = new Map<SyntheticLayerType, string>();
  const biasFor = (type: SyntheticLayerType): string => {
    const existing = biases.get(type);
    if (existing !== undefined) return existing;
    const window = type === 'sliding_attention' ? spec.slidingWindow : null;
    const bias = attentionBias(model.at(type === 'sliding_attention' ? 'sliding_mask' : 'causal_mask'), biasInputs, groupSize, window);
    biases.set(type, bias);
    return bias;
  };

  weights.layers.forEach((layer, i) => {
    const prefix = `model.layers.${i}`;
    const scope = model.at(`layers.${i}`);
    const matrix = (name: string, dims: readonly number[], data: WeightData): string =>
      put(`${prefix}.${name}.weight.T`, dims, data, TRANSPOSED);
    const bias = (name: string, width: number, data: WeightData): string => put(`${prefix}.${name}.bias`, [width], data);

    const attentionInput = rmsNorm(scope.at('input_layernorm'), hiddenStates,
      put(`${prefix}.input_layernorm.weight`, [hidden], layer.inputNorm), spec.rmsNormEps);
    const attention = groupedQueryAttention(scope.at('self_attn'), {
      x: attentionInput,
      pastKey: past[i].key,
      pastValue: past[i].value,
      presentKey: `present.${i}.key`,
      presentValue: `present.${i}.value`,
      rotary,
      bias: biasFor(spec.layerTypes[i]),
    }, {
      qProj: matrix('self_attn.q_proj', [hidden, spec.numAttentionHeads * headDim], layer.qProj),
      kProj: matrix('self_attn.k_proj', [hidden, kvHeads * headDim], layer.kProj),
      vProj: matrix('self_attn.v_proj', [hidden, kvHeads * headDim], layer.vProj),
      oProj: matrix('self_attn.o_proj', [spec.numAttentionHeads * headDim, hidden], layer.oProj),
      ...(layer.qkvBias === undefined ? {} : {
        qBias: bias('self_attn.q_proj', spec.numAttentionHeads * headDim, layer.qkvBias.q),
        kBias: bias('self_attn.k_proj', kvHeads * headDim, layer.qkvBias.k),
        vBias: bias('self_attn.v_proj', kvHeads * headDim, layer.qkvBias.v),
      }),
    }, spec);
    hiddenStates = scope.op('Add', [hiddenStates, attention]); // [B, S, hidden]

    const mlpInput = rmsNorm(scope.at('post_attention_layernorm'), hiddenStates,
      put(`${prefix}.post_attention_layernorm.weight`, [hidden], layer.postAttentionNorm), spec.rmsNormEps);
    const mlp = gatedMlp(scope.at('mlp'), mlpInput, {
      gateProj: matrix('mlp.gate_proj', [hidden, spec.intermediateSize], layer.gateProj),
      upProj: matrix('mlp.up_proj', [hidden, spec.intermediateSize], layer.upProj),
      downProj: matrix('mlp.down_proj', [spec.intermediateSize, hidden], layer.downProj),
    });
    hiddenStates = scope.op('Add', [hiddenStates, mlp]); // [B, S, hidden]
  });

  const finalHidden = rmsNorm(model.at('norm'), hiddenStates, put('model.norm.weight', [hidden], weights.finalNorm), spec.rmsNormEps);
  const lmHead = weights.lmHead === null ? null : put('lm_head.weight.T', [hidden, spec.vocabSize], weights.lmHead, TRANSPOSED);
  const logitBias = put('lm_head.logit_bias', [spec.vocabSize], weights.logitBias,
    'kvscope addition: a large negative logit for special and unprintable byte tokens, so decoding never picks them');
  const scores = lmHead === null
    ? tiedLmHead(g, finalHidden, embedTokens, spec.vocabSize)
    : g.at('/lm_head').op('MatMul', [finalHidden, lmHead]); // [B, S, vocab]
  g.at('/lm_head').opNamed('logits', 'Add', [scores, logitBias]); // [B, S, vocab]

  return createModel({
    irVersion: BigInt(IR_VERSION),
    producerName: 'kvscope',
    producerVersion: `synthetic-v${SYNTHETIC_FORMAT_VERSION}`,
    docString: spec.kind === 'synthetic-retrieval'
      ? 'kvscope synthetic-retrieval: a Llama whose weights are set by construction (an induction circuit); see config.json kvscope_synthetic.'
      : `kvscope ${spec.kind}: a deterministic random-weight Llama (seed ${spec.seed}); see config.json kvscope_synthetic.`,
    graph: g.build('main_graph', `${spec.kind}: ${spec.numLayers} layers, hidden ${hidden}, ${spec.numAttentionHeads}/${kvHeads} heads of ${headDim}`),
    opsetImport: [{ domain: '', version: BigInt(SYNTHETIC_OPSET) }],
    metadataProps: [
      { key: 'kvscope_synthetic_kind', value: spec.kind },
      { key: 'kvscope_synthetic_seed', value: String(spec.seed) },
      { key: 'kvscope_synthetic_format_version', value: String(SYNTHETIC_FORMAT_VERSION) },
    ],
  });
}

/**
 * The tied LM head, `hidden @ embed_tokens.T`, reading the embedding matrix [vocab, hidden] itself
 * (one copy in the file and in memory): Gemm's transB multiplies by the transpose without a
 * Transpose node, which ORT would constant-fold into a second copy. Gemm is 2-D, so the rows are
 * flattened (Flatten at axis 2) and the result reshaped back.
 */
function tiedLmHead(g: GraphBuilder, finalHidden: string, embedTokens: string, vocabSize: number): string {
  const scope = g.at('/lm_head');
  const flat = scope.op('Flatten', [finalHidden], [intAttribute('axis', 2)]); // [B·S, hidden]
  const product = scope.op('Gemm', [flat, embedTokens], [intAttribute('transB', 1)]); // [B·S, vocab]
  const leading = scope.op('Shape', [finalHidden], [intAttribute('start', 0), intAttribute('end', 2)]); // [2]: B, S
  const shape = scope.op('Concat', [leading, g.int64([vocabSize])], [intAttribute('axis', 0)]); // [3]
  return scope.op('Reshape', [product, shape]); // [B, S, vocab]
}
