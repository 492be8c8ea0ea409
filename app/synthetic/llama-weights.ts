import type { ExternalTensorData } from '../onnx/graph-builder.js';
import { SeededRandom } from './seeded-random.js';
import type { SyntheticModelSpec } from './synthetic-spec.js';

/** A tensor's values in memory, or where they lie in the external data file (scale models). */
export type WeightData = Float32Array | ExternalTensorData;

/**
 * One decoder layer's weights. Projections are stored [in, out], the transpose of torch's
 * `nn.Linear.weight` [out, in], so the graph multiplies `x @ W` with no Transpose node.
 */
export interface LlamaLayerWeights {
  /** [hidden] */
  readonly inputNorm: WeightData;
  /** [hidden, heads·headDim] */
  readonly qProj: WeightData;
  /** [hidden, kvHeads·headDim]; outlier channels' columns scaled */
  readonly kProj: WeightData;
  /** [hidden, kvHeads·headDim] */
  readonly vProj: WeightData;
  /** [heads·headDim], [kvHeads·headDim] ×2: Qwen2's q/k/v biases (spec.qkvBias) */
  readonly qkvBias?: { readonly q: WeightData; readonly k: WeightData; readonly v: WeightData };
  /** [heads·headDim, hidden] */
  readonly oProj: WeightData;
  /** [hidden] */
  readonly postAttentionNorm: WeightData;
  /** [hidden, intermediate] */
  readonly gateProj: WeightData;
  /** [hidden, intermediate] */
  readonly upProj: WeightData;
  /** [intermediate, hidden] */
  readonly downProj: WeightData;
  /** channels within a head (0..headDim-1) whose keys are outliers, in every KV head, ascending */
  readonly outlierKeyChannels: readonly number[];
}

export interface LlamaWeights {
  /** [vocab, hidden] */
  readonly embedTokens: WeightData;
  readonly layers: readonly LlamaLayerWeights[];
  /** [hidden] */
  readonly finalNorm: WeightData;
  /** [hidden, vocab]; null when tied (spec.tieWordEmbeddings: the head multiplies by embedTokens transposed) */
  readonly lmHead: WeightData | null;
  /** [vocab]: MUTED_LOGIT at muted tokens, 0 elsewhere (not part of HF Llama; see syntheticLlamaWeights) */
  readonly logitBias: WeightData;
}

/** Low enough that softmax gives a muted token e^-100 of the top token's probability: never picked. */
export const MUTED_LOGIT = -100;

/**
 * Standard deviations (× 1/√fan_in for projections), chosen so activations stay O(1) through 8
 * layers while the context matters: peaked-enough attention (scores of std ≈ 2), residual branches
 * larger than the embedding (at embed 1, greedy decoding fell into 17-token runs of one token; at
 * 0.7 no run is longer than 2 in 200 tokens), and logits of std ≈ 3 so greedy choices are decided.
 */
export const SCALE = {
  embed: 0.7,
  queryKey: 1.4,
  value: 1,
  output: 1,
  gateUp: 1,
  down: 1,
  lmHead: 3,
  /** norm weights uniform in 1 ± this, as trained models' are not all ones */
  normSpread: 0.2,
} as const;

/**
 * Fixed-seed random weights for the synthetic Llama. Every tensor draws from its own named stream,
 * so the bytes depend only on the seed and the geometry.
 *
 * - Outlier keys, as real models have (KIVI, KVQuant): per layer, `outlierKeyPairs` RoPE pairs
 *   (c, c + headDim/2) with c in the low-frequency quarter get k_proj columns × `outlierKeyScale`.
 *   Scaling both members of a pair keeps the outliers in the same channels after RoPE rotates them.
 * - `mutedTokenIds` get a logit bias of MUTED_LOGIT, so neither greedy decoding nor sampling picks
 *   them: special tokens (a benchmark run should not stop early at a random `</s>`) and byte tokens
 *   that would decode to control characters or broken UTF-8.
 */
export function syntheticLlamaWeights(spec: SyntheticModelSpec, mutedTokenIds: readonly number[]): LlamaWeights {
  const hidden = spec.hiddenSize;
  const queryWidth = spec.numAttentionHeads * spec.headDim;
  const keyWidth = spec.numKeyValueHeads * spec.headDim;
  const uniform = (name: string, length: number, std: number): Float32Array =>
    new SeededRandom(spec.seed, name).fillUniform(new Float32Array(length), std * Math.sqrt(3));
  const norm = (name: string): Float32Array => {
    const weight = new SeededRandom(spec.seed, name).fillUniform(new Float32Array(hidden), SCALE.normSpread);
    for (let i = 0; i < weight.length; i++) weight[i] += 1;
    return weight;
  };

  const layers = Array.from({ length: spec.numLayers }, (_, layer): LlamaLayerWeights => {
    const prefix = `model.layers.${layer}`;
    const outlierKeyChannels = outlierKeyChannelsOf(spec, layer);
    const kProj = uniform(`${prefix}.self_attn.k_proj`, hidden * keyWidth, SCALE.queryKey / Math.sqrt(hidden));
    scaleColumns(kProj, keyWidth, outlierColumns(spec, outlierKeyChannels), spec.outlierKeyScale);
    return {
      inputNorm: norm(`${prefix}.input_layernorm`),
      qProj: uniform(`${prefix}.self_attn.q_proj`, hidden * queryWidth, SCALE.queryKey / Math.sqrt(hidden)),
      kProj,
      vProj: uniform(`${prefix}.self_attn.v_proj`, hidden * keyWidth, SCALE.value / Math.sqrt(hidden)),
      oProj: uniform(`${prefix}.self_attn.o_proj`, queryWidth * hidden, SCALE.output / Math.sqrt(queryWidth)),
      postAttentionNorm: norm(`${prefix}.post_attention_layernorm`),
      gateProj: uniform(`${prefix}.mlp.gate_proj`, hidden * spec.intermediateSize, SCALE.gateUp / Math.sqrt(hidden)),
      upProj: uniform(`${prefix}.mlp.up_proj`, hidden * spec.intermediateSize, SCALE.gateUp / Math.sqrt(hidden)),
      downProj: uniform(`${prefix}.mlp.down_proj`, spec.intermediateSize * hidden, SCALE.down / Math.sqrt(spec.intermediateSize)),
      outlierKeyChannels,
    };
  });

  const logitBias = new Float32Array(spec.vocabSize);
  for (const id of mutedTokenIds) logitBias[id] = MUTED_LOGIT;
  return {
    embedTokens: uniform('model.embed_tokens', spec.vocabSize * hidden, SCALE.embed),
    layers,
    finalNorm: norm('model.norm'),
    lmHead: uniform('lm_head', hidden * spec.vocabSize, SCALE.lmHead / Math.sqrt(hidden)),
    logitBias,
  };
}

/**
 * A layer's outlier key channels without drawing any weight (config.json reports them): both members
 * of each chosen RoPE pair, c and c + headDim/2, with c in [headDim/4, headDim/2), ascending.
 */
export function outlierKeyChannelsOf(spec: SyntheticModelSpec, layer: number): number[] {
  const half = spec.headDim / 2;
  const low = spec.headDim / 4;
  const random = new SeededRandom(spec.seed, `model.layers.${layer}.outlier_key_channels`);
  const chosen = new Set<number>();
  while (chosen.size < spec.outlierKeyPairs) chosen.add(low + random.nextInt(half - low));
  return [...chosen].flatMap((c) => [c, c + half]).sort((a, b) => a - b);
}

/** The k_proj output columns of the outlier channels, in every KV head. */
function outlierColumns(spec: SyntheticModelSpec, channels: readonly number[]): number[] {
  return Array.from({ length: spec.numKeyValueHeads }, (_, head) => channels.map((c) => head * spec.headDim + c)).flat();
}

/** Multiplies columns of a row-major [rows, columns] matrix in place. */
function scaleColumns(matrix: Float32Array, columns: number, which: readonly number[], factor: number): void {
  for (let row = 0; row < matrix.length; row += columns) {
    for (const column of which) matrix[row + column] *= factor;
  }
}
