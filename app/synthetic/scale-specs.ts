import type { SyntheticModelSpec } from './synthetic-spec.js';

/**
 * Random-weight models with researchers' real geometries and vocabularies (issue 23, point 6), so
 * memory and speed are measured at the scale users run: the vocabulary decides the logits' and the
 * reference's size, the body the weights', the KV geometry the cache's. Built locally in seconds.
 */
export type ScaleModelKind = 'synthetic-qwen2.5-0.5b' | 'synthetic-llama3.2-1b' | 'synthetic-8b-kv-128k';
export const SCALE_MODEL_KINDS: readonly ScaleModelKind[] = ['synthetic-qwen2.5-0.5b', 'synthetic-llama3.2-1b', 'synthetic-8b-kv-128k'];

/** Not the small models' seed: these weights have nothing to agree with. */
const SEED = 20_261_206;

/** Merges learned from the corpus; the remaining ids are generated tokens (synthetic-tokenizer.ts). */
const TRAINED_VOCAB = 512;

/**
 * - `synthetic-qwen2.5-0.5b`: Qwen2.5-0.5B's config (24 layers, hidden 896, 14 query / 2 KV heads of
 *   64, intermediate 4864, vocab 151,936, q/k/v biases, tied embeddings, rope θ 1e6, eps 1e-6):
 *   494M parameters, 1.98 GB of float32 in `onnx/model.onnx_data`, as an Optimum fp32 export.
 * - `synthetic-llama3.2-1b`: Llama-3.2-1B's (16 layers, hidden 2048, 32 / 8 heads of 64,
 *   intermediate 8192, vocab 128,256, tied, rope θ 5e5): 1.24B parameters, 4.9 GB.
 * - `synthetic-8b-kv-128k`: synthetic-8b-kv with Llama 3's real 128,256-token vocabulary. Its KV
 *   geometry is Llama-3-8B's (32 layers × 8 KV heads × 128: 256 KiB of float32 K and V per token)
 *   while the body stays tiny (hidden 64, intermediate 128): an 8B body would be 32 GB of float32,
 *   more than this machine has, and what the KV and logits studies need is the cache and the
 *   vocabulary at full size (a 128k-wide logits row, 1 GiB of cache at 4k tokens), not the body.
 */
export function scaleModelSpec(kind: ScaleModelKind): SyntheticModelSpec {
  switch (kind) {
    case 'synthetic-qwen2.5-0.5b':
      return {
        ...common(kind, 24),
        modelType: 'qwen2',
        qkvBias: true,
        hiddenSize: 896,
        intermediateSize: 4864,
        numAttentionHeads: 14,
        numKeyValueHeads: 2,
        headDim: 64,
        vocabSize: 151_936,
        maxPositionEmbeddings: 32_768,
        ropeTheta: 1_000_000,
        rmsNormEps: 1e-6,
        tieWordEmbeddings: true,
      };
    case 'synthetic-llama3.2-1b':
      return {
        ...common(kind, 16),
        hiddenSize: 2048,
        intermediateSize: 8192,
        numAttentionHeads: 32,
        numKeyValueHeads: 8,
        headDim: 64,
        vocabSize: 128_256,
        maxPositionEmbeddings: 131_072,
        ropeTheta: 500_000,
        tieWordEmbeddings: true,
      };
    case 'synthetic-8b-kv-128k':
      return {
        ...common(kind, 32),
        hiddenSize: 64,
        intermediateSize: 128,
        numAttentionHeads: 8,
        numKeyValueHeads: 8,
        headDim: 128,
        vocabSize: 128_256,
        maxPositionEmbeddings: 8192,
        ropeTheta: 500_000,
      };
  }
}

function common(kind: ScaleModelKind, numLayers: number) {
  return {
    kind,
    seed: SEED,
    numLayers,
    modelType: 'llama' as const,
    qkvBias: false,
    tieWordEmbeddings: false,
    rmsNormEps: 1e-5,
    unkTokenId: 0,
    bosTokenId: 1,
    eosTokenId: 2,
    layerTypes: Array.from({ length: numLayers }, () => 'full_attention' as const),
    slidingWindow: null,
    outlierKeyPairs: 2,
    outlierKeyScale: 10,
    externalData: true,
    trainedVocabSize: TRAINED_VOCAB,
    logitsToKeep: true,
  };
}
