import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { tinyDecoder } from '../../model-layout/test-support/tiny-decoder.js';
import { decodeModel, encodeModel, type ModelProto } from '../../onnx/onnx-model.js';
import { findLmHead, lmHeadModel, withHeadInput, withHiddenOutput, type LmHead } from '../../onnx/rewrite/lm-head-split.js';
import { storiesDir } from '../test-support/stories.js';

/**
 * The compact exact reference's foundation (docs/eval-record.md "The compact form, exact"): the final
 * hidden state out of the full graph, and the LM head cut from it, run on that hidden state, give the
 * full graph's logits bit for bit, on the whole window, on the scored rows alone and row by row (a
 * reference would store and recompute only the scored rows).
 */
async function session(model: ModelProto): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(encodeModel(model), { executionProviders: ['cpu'], logSeverityLevel: 3 });
}

function windowFeeds(model: ModelProto, tokens: number, vocab: number): Record<string, ort.Tensor> {
  const feeds: Record<string, ort.Tensor> = {};
  for (const input of model.graph!.input) {
    const name = input.name;
    if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from({ length: tokens }, (_, i) => BigInt((i * 7919 + 13) % vocab)), [1, tokens]);
    else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', new BigInt64Array(tokens).fill(1n), [1, tokens]);
    else if (name === 'position_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from({ length: tokens }, (_, i) => BigInt(i)), [1, tokens]);
    else {
      const dims = input.type!.value.case === 'tensorType' ? input.type!.value.value.shape!.dim.map((d) => (d.value.case === 'dimValue' ? Number(d.value.value) : 0)) : [];
      // past key/value: [batch 1, heads, 0 rows, head_dim]
      const shape = dims.map((d, i) => (i === 0 ? 1 : d));
      feeds[name] = new ort.Tensor('float32', new Float32Array(0), shape);
    }
  }
  return feeds;
}

/** Values whose bits differ (a loop: a deep equality over millions of elements takes minutes). */
function differing(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.max(a.length, b.length);
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  let count = 0;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) count++;
  return count;
}

async function checkHead(model: ModelProto, tokens: number): Promise<void> {
  const head = findLmHead(model, 'logits') as LmHead;
  expect('reason' in head).toBe(false);
  const full = await session(model);
  const augmented = await session(withHiddenOutput(model, head));
  const lm = await session(lmHeadModel(model, head));
  try {
    const vocabDim = model.graph!.output[0]!.type!.value.case === 'tensorType' ? model.graph!.output[0]!.type!.value.value.shape!.dim[2]! : null;
    const vocab = vocabDim?.value.case === 'dimValue' ? Number(vocabDim.value.value) : 0;
    const feeds = windowFeeds(model, tokens, vocab);
    const logits = (await full.run(feeds))['logits']!.data as Float32Array;
    const outputs = await augmented.run(feeds);
    // The added output changes nothing the graph computes.
    expect(differing(outputs['logits']!.data as Float32Array, logits)).toBe(0);
    const hiddenTensor = outputs[head.hidden]!;
    const hiddenSize = hiddenTensor.dims.at(-1)!;
    const hidden = hiddenTensor.data as Float32Array;
    const run = async (first: number, rows: number): Promise<Float32Array> => {
      const input = new ort.Tensor('float32', hidden.slice(first * hiddenSize, (first + rows) * hiddenSize), [1, rows, hiddenSize]);
      return (await lm.run({ [head.hidden]: input }))['logits']!.data as Float32Array;
    };
    expect(differing(await run(0, tokens), logits)).toBe(0);
    const prefill = tokens / 2;
    const scored = tokens - 1 - prefill;
    expect(differing(await run(prefill, scored), logits.slice(prefill * vocab, (prefill + scored) * vocab))).toBe(0);
    for (const row of [prefill, tokens - 2]) expect(differing(await run(row, 1), logits.slice(row * vocab, (row + 1) * vocab))).toBe(0);
    await checkHeadInput(model, head, feeds, logits, hidden, hiddenSize, vocab);
  } finally {
    await Promise.all([full.release(), augmented.release(), lm.release()]);
  }
}

/**
 * The model that is its own head (withHeadInput): fed zero head rows, it computes the source's logits
 * bit for bit; a one-token
 * run fed stored hidden rows returns their logits after its own row, bit for bit the full graph's.
 */
async function checkHeadInput(
  model: ModelProto, head: LmHead, feeds: Record<string, ort.Tensor>, logits: Float32Array, hidden: Float32Array, hiddenSize: number, vocab: number,
): Promise<void> {
  const built = withHeadInput(withHiddenOutput(model, head), head);
  if ('reason' in built) throw new Error(built.reason);
  const own = await session(built.model);
  try {
    const none = new ort.Tensor('float32', new Float32Array(0), [1, 0, built.hiddenSize]);
    expect(differing((await own.run({ ...feeds, [built.input]: none }))['logits']!.data as Float32Array, logits)).toBe(0);
    const tokens = hidden.length / hiddenSize;
    const one = windowFeeds(model, 1, vocab);
    for (const [first, rows] of [[tokens / 2, tokens / 2 - 1], [tokens - 2, 1]] as const) {
      const input = new ort.Tensor('float32', hidden.slice(first * hiddenSize, (first + rows) * hiddenSize), [1, rows, hiddenSize]);
      const out = (await own.run({ ...one, [built.input]: input }))['logits']!;
      expect(out.dims).toEqual([1, 1 + rows, vocab]);
      expect(differing((out.data as Float32Array).subarray(vocab), logits.slice(first * vocab, (first + rows) * vocab))).toBe(0);
    }
  } finally {
    await own.release();
  }
}

describe('the LM head cut from the graph recomputes the logits bit for bit from the hidden state', () => {
  it('stories260k (tied embeddings, vocabulary 512)', async () => {
    await checkHead(decodeModel(readFileSync(join(storiesDir(), 'onnx', 'model.onnx'))), 96);
  });

  it.each([
    ['vocabulary 151,936, hidden 64', { kvHeads: 4, headDim: 16, vocab: 151_936 }],
    ['hidden 896 (Qwen2.5-0.5B\'s), vocabulary 4,096', { kvHeads: 14, headDim: 64, vocab: 4096 }],
  ] as const)('tiny decoder: %s', async (_name, geometry) => {
    await checkHead(tinyDecoder({ layers: 1, ...geometry }), 48);
  });

  it('says why when the logits depend on more than a hidden state', () => {
    const model = tinyDecoder({ layers: 1 });
    expect(findLmHead(model, 'present.0.key')).toMatchObject({ reason: expect.any(String) as string });
    expect(findLmHead(model, 'nope')).toEqual({ reason: 'the graph has no output nope' });
  });
});
