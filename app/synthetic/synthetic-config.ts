import { SYNTHETIC_FORMAT_VERSION, type SyntheticModelSpec } from './synthetic-spec.js';

/** What the weights generator decided that config.json reports (the outlier channels per layer). */
export interface SyntheticConfigFacts {
  readonly outlierKeyChannels: ReadonlyArray<readonly number[]>;
  readonly mutedTokenIds: readonly number[];
}

const DESCRIPTION =
  "kvscope's embedded test model: a Llama decoder with fixed-seed random weights, generated on this machine " +
  '(no download, no training, so its text is meaningless). Its ONNX graph has the inputs and outputs of an ' +
  'Optimum decoder-with-past export. In every layer the key channels in outlier_key_channels (the same in each ' +
  'KV head) are about outlier_key_scale times larger than the rest, as in trained models. The logits of special ' +
  'tokens and unprintable byte tokens get a bias of -100 (muted_token_ids), so decoding never ends on its own ' +
  'and always decodes to printable text.';

const TESTBED_DESCRIPTION =
  "kvscope's retrieval testbed: a two-layer Llama whose weights are set by construction, not trained or drawn " +
  '(app/synthetic/retrieval-testbed-weights.ts). Layer 0 holds previous-token heads (the tokens 1, 2 and 3 back), ' +
  'layer 1 a copy head that finds the earlier occurrence of the last three tokens and predicts the token after it ' +
  '(an induction head). It retrieves a pass key exactly at full precision at every depth up to 4,096 tokens; its ' +
  'WordPiece vocabulary holds only the passkey prompt\'s words and the digits, every other word is <unk>.';

const LOGITS_TO_KEEP_NOTE =
  'the graph takes num_logits_to_keep (int64 scalar) and computes the logits of the last rows only, as ' +
  "transformers' logits_to_keep; the weights are random, in onnx/model.onnx_data";

const HYBRID_NOTE =
  ' Layers whose layer_types entry is sliding_attention see only the last sliding_window positions (the current ' +
  'one included); the graph masks them, and every layer still takes and returns the full-length cache.';

/**
 * config.json in transformers' LlamaConfig vocabulary, written from the same spec as the graph so
 * the two cannot disagree. The hybrid adds `layer_types` and `sliding_window`, which transformers'
 * QuantizedCache refuses under its own policy (kvscope's preflight says so) and which kvscope's
 * `full-attention-only` policy accepts.
 */
export function syntheticConfigJson(spec: SyntheticModelSpec, facts: SyntheticConfigFacts): Record<string, unknown> {
  const hybrid = spec.slidingWindow !== null;
  const qwen2 = spec.modelType === 'qwen2';
  return {
    architectures: [qwen2 ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM'],
    model_type: spec.modelType,
    // Qwen2Config has no attention_bias: its q/k/v projections always carry one
    ...(qwen2 ? { use_sliding_window: false, sliding_window: null, max_window_layers: spec.numLayers } : { attention_bias: spec.qkvBias }),
    attention_dropout: 0,
    bos_token_id: spec.bosTokenId,
    eos_token_id: spec.eosTokenId,
    head_dim: spec.headDim,
    hidden_act: 'silu',
    hidden_size: spec.hiddenSize,
    intermediate_size: spec.intermediateSize,
    max_position_embeddings: spec.maxPositionEmbeddings,
    mlp_bias: false,
    num_attention_heads: spec.numAttentionHeads,
    num_hidden_layers: spec.numLayers,
    num_key_value_heads: spec.numKeyValueHeads,
    rms_norm_eps: spec.rmsNormEps,
    rope_scaling: null,
    rope_theta: spec.ropeTheta,
    tie_word_embeddings: spec.tieWordEmbeddings,
    torch_dtype: 'float32',
    use_cache: true,
    vocab_size: spec.vocabSize,
    ...(spec.logitsToKeep ? { kvscope_logits_to_keep: LOGITS_TO_KEEP_NOTE } : {}),
    ...(hybrid ? { layer_types: [...spec.layerTypes], sliding_window: spec.slidingWindow } : {}),
    kvscope_synthetic: {
      kind: spec.kind,
      format_version: SYNTHETIC_FORMAT_VERSION,
      seed: spec.seed,
      description: spec.kind === 'synthetic-retrieval' ? TESTBED_DESCRIPTION : hybrid ? DESCRIPTION + HYBRID_NOTE : DESCRIPTION,
      outlier_key_channels: facts.outlierKeyChannels.map((channels) => [...channels]),
      outlier_key_scale: spec.outlierKeyScale,
      muted_token_ids: [...facts.mutedTokenIds],
    },
  };
}

/** generation_config.json: greedy by default, stopping at `</s>` (which the model never picks). */
export function syntheticGenerationConfigJson(spec: SyntheticModelSpec): Record<string, unknown> {
  return {
    bos_token_id: spec.bosTokenId,
    eos_token_id: spec.eosTokenId,
    do_sample: false,
    max_length: spec.maxPositionEmbeddings,
  };
}
