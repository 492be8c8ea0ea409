import { testbedLayout } from './retrieval-testbed-weights.js';
import { testbedVocabulary } from './retrieval-testbed-tokenizer.js';
import type { SyntheticModelSpec } from './synthetic-spec.js';

/** The retrieval testbed's context: the longest prompt plus answer it retrieves from. */
export const TESTBED_CONTEXT = 4096;
const HEAD_DIM = 256;

/**
 * The retrieval testbed (retrieval-testbed-weights.ts): two Llama layers of three heads of 256
 * (a multiple of 32, as llama.cpp's block formats need), the passkey vocabulary, rope_theta 1e20 so
 * that the copy head's RoPE pairs turn by at most 0.12 rad over 4,096 positions.
 */
export function retrievalTestbedSpec(): SyntheticModelSpec {
  const vocabSize = testbedVocabulary().length;
  return {
    kind: 'synthetic-retrieval',
    seed: 0,
    numLayers: 2,
    hiddenSize: testbedLayout(vocabSize, HEAD_DIM).hidden,
    intermediateSize: 8,
    numAttentionHeads: 3,
    numKeyValueHeads: 3,
    headDim: HEAD_DIM,
    vocabSize,
    maxPositionEmbeddings: TESTBED_CONTEXT,
    ropeTheta: 1e20,
    rmsNormEps: 1e-5,
    unkTokenId: 0,
    bosTokenId: 1,
    eosTokenId: 2,
    layerTypes: ['full_attention', 'full_attention'],
    slidingWindow: null,
    outlierKeyPairs: 0,
    outlierKeyScale: 1,
    modelType: 'llama',
    qkvBias: false,
    tieWordEmbeddings: false,
    externalData: false,
    trainedVocabSize: vocabSize,
    logitsToKeep: false,
  };
}
