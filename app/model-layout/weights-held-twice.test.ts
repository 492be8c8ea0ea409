import { describe, expect, it } from 'vitest';
import { bytesSource } from '../onnx/byte-source.js';
import { readGraphHeader } from '../onnx/graph-header.js';
import { encodeModel } from '../onnx/onnx-model.js';
import { buildLlamaModel } from '../synthetic/llama-graph.js';
import { scaleWeightPlan } from '../synthetic/scale-weights.js';
import { syntheticModelSpec, type SyntheticModelKind } from '../synthetic/synthetic-spec.js';
import { syntheticTokenizer } from '../synthetic/synthetic-tokenizer.js';
import { weightsHeldTwiceBytes } from './weights-held-twice.js';

/** A scale model's graph cut to one layer (its weights are external: the graph names offsets only). */
async function header(kind: SyntheticModelKind) {
  const full = syntheticModelSpec(kind);
  const spec = { ...full, numLayers: 1, layerTypes: full.layerTypes.slice(0, 1) };
  const plan = scaleWeightPlan(spec, syntheticTokenizer(spec).mutedTokenIds);
  return readGraphHeader(bytesSource(encodeModel(buildLlamaModel(spec, plan.weights))), 'model.onnx');
}

describe('the float32 weights a CPU session holds twice (the prefill guard\'s weights)', () => {
  it('a tied embedding (Qwen2.5-0.5B: the Gather and the head\'s Gemm read it): its 151,936 × 896 float32', async () => {
    expect(weightsHeldTwiceBytes(await header('synthetic-qwen2.5-0.5b'))).toBe(151_936 * 896 * 4);
  });

  it('none where the head has a weight of its own (synthetic-8b-kv-128k)', async () => {
    expect(weightsHeldTwiceBytes(await header('synthetic-8b-kv-128k'))).toBe(0);
  });
});
