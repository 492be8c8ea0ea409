import { retrievalTestbedSpec } from './retrieval-testbed-spec.js';
import { SCALE_MODEL_KINDS, scaleModelSpec, type ScaleModelKind } from './scale-specs.js';

/**
 * The embedded models: plain Llama, the same weights with gemma2-like sliding-window layers, and a
 * model with Llama-3-8B's KV geometry (32 layers, 8 KV heads of 128) on a tiny body, whose KV cache
 * dominates its memory as it does in real long-context runs (the in-graph dequantization bench);
 * then the scale models (scale-specs.ts): real geometries and vocabularies, weights in external data;
 * and the retrieval testbed (retrieval-testbed-weights.ts): an induction circuit whose weights are set
 * by construction, which retrieves the pass key exactly at full precision.
 */
export type SyntheticModelKind = 'synthetic' | 'synthetic-hybrid' | 'synthetic-8b-kv' | ScaleModelKind | 'synthetic-retrieval';
export const SYNTHETIC_MODEL_KINDS: readonly SyntheticModelKind[] = ['synthetic', 'synthetic-hybrid', 'synthetic-8b-kv', ...SCALE_MODEL_KINDS, 'synthetic-retrieval'];

/**
 * Bump whenever anything that ends up in the model folder changes (graph, weights, config,
 * tokenizer): cached folders are keyed by it, and a test pins the bytes each version produces.
 */
export const SYNTHETIC_FORMAT_VERSION = 2;

export type SyntheticLayerType = 'full_attention' | 'sliding_attention';

/** Everything the generator needs; config.json is written from it, so the graph and config agree. */
export interface SyntheticModelSpec {
  readonly kind: SyntheticModelKind;
  readonly seed: number;
  readonly numLayers: number;
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly numAttentionHeads: number;
  readonly numKeyValueHeads: number;
  readonly headDim: number;
  readonly vocabSize: number;
  readonly maxPositionEmbeddings: number;
  readonly ropeTheta: number;
  readonly rmsNormEps: number;
  readonly bosTokenId: number;
  readonly eosTokenId: number;
  readonly unkTokenId: number;
  /** per layer; sliding layers see only the last `slidingWindow` positions, the current one included */
  readonly layerTypes: readonly SyntheticLayerType[];
  readonly slidingWindow: number | null;
  /** RoPE pairs (c, c + headDim/2) per layer whose k_proj rows are scaled, so 2× this many key channels stand out */
  readonly outlierKeyPairs: number;
  /** how much larger the outlier channels' keys are than the others' */
  readonly outlierKeyScale: number;
  /** config.json's model_type and architecture: Qwen2 differs from Llama by its q/k/v biases (`qkvBias`) */
  readonly modelType: 'llama' | 'qwen2';
  /** q_proj, k_proj and v_proj carry a bias (Qwen2's attention) */
  readonly qkvBias: boolean;
  /** the LM head is the embedding matrix (Qwen2.5-0.5B, Llama-3.2-1B): one copy in the file */
  readonly tieWordEmbeddings: boolean;
  /** weights in `onnx/model.onnx_data` (Optimum's layout above 2 GB, protobuf's limit), generated streaming */
  readonly externalData: boolean;
  /** BPE merges are learned up to this many tokens; the rest of the vocabulary is generated (synthetic-tokenizer.ts) */
  readonly trainedVocabSize: number;
  /** the graph takes `num_logits_to_keep` and computes only the last rows' logits (logits-rows rewrite) */
  readonly logitsToKeep: boolean;
}

/** One seed for both kinds: the hybrid has the plain model's weights, so the two agree on short contexts. */
const SEED = 20_260_101;
const NUM_LAYERS = 8;

/**
 * The geometry of generation-speed.md's 8-layer model: realistic KV shapes (4 KV heads of 64 for 8
 * query heads), 23.5M parameters, 95 MB of float32.
 */
export function syntheticModelSpec(kind: SyntheticModelKind): SyntheticModelSpec {
  if (kind === 'synthetic-8b-kv') return llama3KvSpec();
  if (kind === 'synthetic-retrieval') return retrievalTestbedSpec();
  if ((SCALE_MODEL_KINDS as readonly string[]).includes(kind)) return scaleModelSpec(kind as ScaleModelKind);
  const hybrid = kind === 'synthetic-hybrid';
  return {
    kind,
    seed: SEED,
    numLayers: NUM_LAYERS,
    hiddenSize: 512,
    intermediateSize: 1376,
    numAttentionHeads: 8,
    numKeyValueHeads: 4,
    headDim: 64,
    vocabSize: 512,
    maxPositionEmbeddings: 4096,
    ropeTheta: 10_000,
    rmsNormEps: 1e-5,
    unkTokenId: 0,
    bosTokenId: 1,
    eosTokenId: 2,
    // gemma2's pattern (sliding at even i, full at odd i), written out as layer_types so transformers
    // and kvscope read the same list whatever the model_type
    layerTypes: Array.from({ length: NUM_LAYERS }, (_, i) => (hybrid && i % 2 === 0 ? 'sliding_attention' : 'full_attention')),
    slidingWindow: hybrid ? 128 : null,
    outlierKeyPairs: 2,
    outlierKeyScale: 10,
    ...SMALL_MODEL,
  };
}

/**
 * Llama-3-8B's KV geometry (32 layers, 8 KV heads, head_dim 128: 256 KiB of float32 K and V per token,
 * 1 GiB at 4k tokens) on a body small enough for a laptop CPU: hidden 64, 8 query heads (one per KV
 * head), intermediate 128, the 512-token vocabulary; 9.4M parameters (37 MB). Positions up to 8,192,
 * Llama-3's context. Its weights are the generator's, from the same seed (its own streams, by name).
 */
function llama3KvSpec(): SyntheticModelSpec {
  const layers = 32;
  return {
    kind: 'synthetic-8b-kv',
    seed: SEED,
    numLayers: layers,
    hiddenSize: 64,
    intermediateSize: 128,
    numAttentionHeads: 8,
    numKeyValueHeads: 8,
    headDim: 128,
    vocabSize: 512,
    maxPositionEmbeddings: 8192,
    ropeTheta: 500_000,
    rmsNormEps: 1e-5,
    unkTokenId: 0,
    bosTokenId: 1,
    eosTokenId: 2,
    layerTypes: Array.from({ length: layers }, () => 'full_attention'),
    slidingWindow: null,
    outlierKeyPairs: 2,
    outlierKeyScale: 10,
    ...SMALL_MODEL,
  };
}

/** What the three small models share: Llama, untied, weights inside the graph, the whole vocabulary trained. */
const SMALL_MODEL = {
  modelType: 'llama',
  qkvBias: false,
  tieWordEmbeddings: false,
  externalData: false,
  trainedVocabSize: 512,
  logitsToKeep: false,
} as const;
