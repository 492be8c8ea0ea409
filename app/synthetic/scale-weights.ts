import { MUTED_LOGIT, outlierKeyChannelsOf, SCALE, type LlamaLayerWeights, type LlamaWeights } from './llama-weights.js';
import { SeededRandom } from './seeded-random.js';
import type { SyntheticModelSpec } from './synthetic-spec.js';

/** Optimum's name for the weights file beside `onnx/model.onnx`. */
export const SCALE_DATA_FILE = 'model.onnx_data';

/** How one tensor's values are drawn: the same distributions as syntheticLlamaWeights. */
type Draw =
  | { readonly kind: 'uniform'; readonly std: number; readonly outlierColumns?: { readonly width: number; readonly columns: ReadonlySet<number>; readonly factor: number } }
  | { readonly kind: 'norm' }
  | { readonly kind: 'logitBias'; readonly mutedTokenIds: readonly number[] };

/** One float32 tensor of the external data file, in file order. */
export interface PlannedTensor {
  /** the seeded stream it draws from */
  readonly stream: string;
  /** float32 values */
  readonly count: number;
  /** bytes from the start of the data file */
  readonly offset: number;
  readonly draw: Draw;
}

export interface ScaleWeightPlan {
  readonly tensors: readonly PlannedTensor[];
  /** the data file's size: the sum of every tensor's 4·count */
  readonly totalBytes: number;
  /** the graph's view of the same tensors: where each lies in SCALE_DATA_FILE */
  readonly weights: LlamaWeights;
}

/** Q/K/V biases: small, as trained Qwen2's are for most channels. */
const BIAS_STD = 0.1;

/**
 * Where every weight of a scale model lies in its external data file, and how it is drawn, without
 * drawing anything (milliseconds): the graph is written from `weights`, the file from `tensors` by
 * weightChunks, so the two agree on every offset by construction. Tensors follow the graph's order
 * (embedding, layers, final norm, LM head, logit bias), as onnx's save_model lays them out.
 */
export function scaleWeightPlan(spec: SyntheticModelSpec, mutedTokenIds: readonly number[]): ScaleWeightPlan {
  const tensors: PlannedTensor[] = [];
  let offset = 0;
  const add = (stream: string, count: number, draw: Draw) => {
    tensors.push({ stream, count, offset, draw });
    const ref = { location: SCALE_DATA_FILE, offset, length: 4 * count };
    offset += 4 * count;
    return ref;
  };
  const hidden = spec.hiddenSize;
  const queryWidth = spec.numAttentionHeads * spec.headDim;
  const keyWidth = spec.numKeyValueHeads * spec.headDim;
  const uniform = (std: number): Draw => ({ kind: 'uniform', std });

  // Tied, the embedding is also the head, and 0.7 would give logits of std 0.7·√hidden ≈ 21 (every step
  // one-hot); the head's scale gives logits of std ≈ 3, and the first RMSNorm makes small embeddings O(1).
  const embedTokens = add('model.embed_tokens', spec.vocabSize * hidden,
    uniform(spec.tieWordEmbeddings ? SCALE.lmHead / Math.sqrt(hidden) : SCALE.embed));
  const layers = Array.from({ length: spec.numLayers }, (_, layer): LlamaLayerWeights => {
    const prefix = `model.layers.${layer}`;
    const outlierKeyChannels = outlierKeyChannelsOf(spec, layer);
    const columns = new Set(Array.from({ length: spec.numKeyValueHeads }, (_, head) => outlierKeyChannels.map((c) => head * spec.headDim + c)).flat());
    const inputNorm = add(`${prefix}.input_layernorm`, hidden, { kind: 'norm' });
    const qProj = add(`${prefix}.self_attn.q_proj`, hidden * queryWidth, uniform(SCALE.queryKey / Math.sqrt(hidden)));
    const kProj = add(`${prefix}.self_attn.k_proj`, hidden * keyWidth, {
      kind: 'uniform', std: SCALE.queryKey / Math.sqrt(hidden), outlierColumns: { width: keyWidth, columns, factor: spec.outlierKeyScale },
    });
    const vProj = add(`${prefix}.self_attn.v_proj`, hidden * keyWidth, uniform(SCALE.value / Math.sqrt(hidden)));
    const qkvBias = spec.qkvBias ? {
      q: add(`${prefix}.self_attn.q_proj.bias`, queryWidth, uniform(BIAS_STD)),
      k: add(`${prefix}.self_attn.k_proj.bias`, keyWidth, uniform(BIAS_STD)),
      v: add(`${prefix}.self_attn.v_proj.bias`, keyWidth, uniform(BIAS_STD)),
    } : undefined;
    return {
      inputNorm,
      qProj,
      kProj,
      vProj,
      ...(qkvBias === undefined ? {} : { qkvBias }),
      oProj: add(`${prefix}.self_attn.o_proj`, queryWidth * hidden, uniform(SCALE.output / Math.sqrt(queryWidth))),
      postAttentionNorm: add(`${prefix}.post_attention_layernorm`, hidden, { kind: 'norm' }),
      gateProj: add(`${prefix}.mlp.gate_proj`, hidden * spec.intermediateSize, uniform(SCALE.gateUp / Math.sqrt(hidden))),
      upProj: add(`${prefix}.mlp.up_proj`, hidden * spec.intermediateSize, uniform(SCALE.gateUp / Math.sqrt(hidden))),
      downProj: add(`${prefix}.mlp.down_proj`, spec.intermediateSize * hidden, uniform(SCALE.down / Math.sqrt(spec.intermediateSize))),
      outlierKeyChannels,
    };
  });
  const finalNorm = add('model.norm', hidden, { kind: 'norm' });
  const lmHead = spec.tieWordEmbeddings ? null : add('lm_head', hidden * spec.vocabSize, uniform(SCALE.lmHead / Math.sqrt(hidden)));
  const logitBias = add('lm_head.logit_bias', spec.vocabSize, { kind: 'logitBias', mutedTokenIds });
  return { tensors, totalBytes: offset, weights: { embedTokens, layers, finalNorm, lmHead, logitBias } };
}

/** float32 values per chunk: 64 MiB, small beside the weights and large enough that writes stream */
const CHUNK_VALUES = 16 * 1024 * 1024;

/**
 * The data file's bytes, in order, as views of one reused buffer (valid until the next chunk is
 * asked for): the caller writes each before taking the next, so memory stays at one chunk whatever
 * the model's size. About 5 ns a value: 2 GB in 2-3 s.
 */
export function* weightChunks(spec: SyntheticModelSpec, plan: ScaleWeightPlan): Generator<Uint8Array> {
  const buffer = new Float32Array(CHUNK_VALUES);
  for (const tensor of plan.tensors) {
    const random = new SeededRandom(spec.seed, tensor.stream);
    for (let start = 0; start < tensor.count; start += CHUNK_VALUES) {
      const chunk = buffer.subarray(0, Math.min(CHUNK_VALUES, tensor.count - start));
      fill(chunk, start, tensor.draw, random);
      yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
  }
}

/** Values [start, start + chunk.length) of a tensor, continuing its stream. */
function fill(chunk: Float32Array, start: number, draw: Draw, random: SeededRandom): void {
  switch (draw.kind) {
    case 'uniform': {
      random.fillUniform(chunk, draw.std * Math.sqrt(3));
      const outliers = draw.outlierColumns;
      if (outliers === undefined) return;
      for (let i = 0; i < chunk.length; i++) {
        if (outliers.columns.has((start + i) % outliers.width)) chunk[i] *= outliers.factor;
      }
      return;
    }
    case 'norm':
      random.fillUniform(chunk, SCALE.normSpread);
      for (let i = 0; i < chunk.length; i++) chunk[i] += 1;
      return;
    case 'logitBias':
      chunk.fill(0);
      for (const id of draw.mutedTokenIds) {
        if (id >= start && id < start + chunk.length) chunk[id - start] = MUTED_LOGIT;
      }
  }
}
