import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayDifference } from '../../cache/test-support/compare.js';
import { sharedDir } from '../golden.js';
import {
  argmax, greedy, logitsAt, openSyntheticSession, runStep, TOLERANCE, type StepOutput, type SyntheticSession,
} from './test-support/synthetic-session.js';

/** 24 ids spread over the vocabulary, special tokens excluded */
const SEQUENCE = Array.from({ length: 24 }, (_, i) => 3 + ((i * 97 + 11) % 509));

let model: SyntheticSession;
beforeAll(async () => {
  model = await openSyntheticSession('synthetic');
});
afterAll(async () => {
  await model?.session.release();
});

function lastLogits(output: StepOutput, sequence: number): Float32Array {
  return logitsAt(output, model.geometry.vocabSize, sequence, 0, sequence - 1);
}

describe('synthetic model in onnxruntime-node (CPU)', () => {
  it('has the Hugging Face decoder-with-past signature, symbol for symbol', () => {
    const { numLayers } = model.geometry;
    const kvNames = (prefix: string): string[] =>
      Array.from({ length: numLayers }, (_, i) => [`${prefix}.${i}.key`, `${prefix}.${i}.value`]).flat();
    expect(model.session.inputNames).toEqual(['input_ids', 'attention_mask', 'position_ids', ...kvNames('past_key_values')]);
    expect(model.session.outputNames).toEqual(['logits', ...kvNames('present')]);

    const shapes = (metadata: readonly ort.InferenceSession.ValueMetadata[]): Record<string, unknown> =>
      Object.fromEntries(metadata.map((value) => [value.name, value.isTensor ? [value.type, value.shape] : null]));
    const inputs = shapes(model.session.inputMetadata);
    const outputs = shapes(model.session.outputMetadata);
    expect(inputs['input_ids']).toEqual(['int64', ['batch_size', 'sequence_length']]);
    expect(inputs['attention_mask']).toEqual(['int64', ['batch_size', 'past_sequence_length + sequence_length']]);
    expect(inputs['position_ids']).toEqual(['int64', ['batch_size', 'sequence_length']]);
    expect(inputs['past_key_values.7.value']).toEqual(['float32', ['batch_size', 4, 'past_sequence_length', 64]]);
    expect(outputs['logits']).toEqual(['float32', ['batch_size', 'sequence_length', 512]]);
    expect(outputs['present.7.key']).toEqual(['float32', ['batch_size', 4, 'past_sequence_length + sequence_length', 64]]);
  });

  it.runIf(existsSync(join(sharedDir(), 'models', 'stories260k', 'onnx', 'model.onnx')))(
    "matches stories260k's export up to the layer count and sizes", async () => {
      const reference = await ort.InferenceSession.create(join(sharedDir(), 'models', 'stories260k', 'onnx', 'model.onnx'));
      try {
        // same names, types and symbolic dims; numbers (heads, head_dim, vocab) are the models' own
        const symbolic = (metadata: readonly ort.InferenceSession.ValueMetadata[], layers: number): string[] =>
          metadata
            .filter((value) => !/\.(\d+)\./.test(value.name) || Number(/\.(\d+)\./.exec(value.name)?.[1]) < layers)
            .map((value) => `${value.name}:${value.isTensor ? `${value.type}[${value.shape.map((dim) => (typeof dim === 'string' ? dim : 'N')).join(',')}]` : '?'}`);
        expect(symbolic(model.session.inputMetadata, 5)).toEqual(symbolic(reference.inputMetadata, 5));
        expect(symbolic(model.session.outputMetadata, 5)).toEqual(symbolic(reference.outputMetadata, 5));
      } finally {
        await reference.release();
      }
    });

  it('gives the same logits and cache from one prefill as from prefill + token-by-token decode', async () => {
    const full = await runStep(model, { ids: [SEQUENCE] });

    let step = await runStep(model, { ids: [SEQUENCE.slice(0, 16)] });
    for (const id of SEQUENCE.slice(16)) step = await runStep(model, { ids: [[id]], past: step.present });

    expect(step.length).toBe(SEQUENCE.length);
    expect(arrayDifference(lastLogits(step, 1), lastLogits(full, SEQUENCE.length)).maxAbs).toBeLessThan(TOLERANCE.logits);
    for (const [name, tensor] of full.present) {
      expect(step.present.get(name)?.dims, name).toEqual(tensor.dims);
      expect(arrayDifference(step.present.get(name)?.data as Float32Array, tensor.data as Float32Array).maxAbs, name).toBeLessThan(TOLERANCE.kv);
    }
  });

  it('handles multi-token chunks on a non-empty past', async () => {
    const full = await runStep(model, { ids: [SEQUENCE] });
    const first = await runStep(model, { ids: [SEQUENCE.slice(0, 10)] });
    const second = await runStep(model, { ids: [SEQUENCE.slice(10, 15)], past: first.present });
    const third = await runStep(model, { ids: [SEQUENCE.slice(15)], past: second.present });
    const chunk = SEQUENCE.length - 15;
    // every row of the last chunk, not just the last: the causal mask inside a chunk is right too
    const expected = full.logits.subarray(15 * model.geometry.vocabSize);
    expect(arrayDifference(third.logits, expected).maxAbs).toBeLessThan(TOLERANCE.logits);
    expect(third.logits.length).toBe(chunk * model.geometry.vocabSize);
  });

  it('rotates keys by position_ids with HF Llama rotate-half RoPE (theta 10000)', async () => {
    const token = SEQUENCE[3];
    const position = 37;
    // layer 0's keys depend on the token alone; at position 0 the rotation is the identity
    const atZero = (await runStep(model, { ids: [[token]], positions: [[0]] })).present.get('present.0.key')?.data as Float32Array;
    const atPosition = (await runStep(model, { ids: [[token]], positions: [[position]] })).present.get('present.0.key')?.data as Float32Array;
    const { headDim } = model.geometry;
    const half = headDim / 2;
    const expected = new Float32Array(atZero.length);
    for (let base = 0; base < atZero.length; base += headDim) {
      for (let c = 0; c < headDim; c++) {
        const i = c % half;
        const angle = position / 10_000 ** ((2 * i) / headDim);
        // rotate_half(k) = cat(-k[half:], k[:half])
        const rotated = c < half ? -atZero[base + c + half] : atZero[base + c - half];
        expected[base + c] = atZero[base + c] * Math.cos(angle) + rotated * Math.sin(angle);
      }
    }
    expect(arrayDifference(atPosition, expected).maxAbs).toBeLessThan(TOLERANCE.kv);
  });

  it('makes logits depend on relative positions only: shifting all positions keeps them, respacing changes them', async () => {
    const ids = SEQUENCE.slice(0, 12);
    const base = await runStep(model, { ids: [ids] });
    const shifted = await runStep(model, { ids: [ids], positions: [ids.map((_, i) => i + 50)] });
    const respaced = await runStep(model, { ids: [ids], positions: [ids.map((_, i) => 3 * i)] });
    expect(arrayDifference(shifted.logits, base.logits).maxAbs).toBeLessThan(1e-3);
    expect(arrayDifference(respaced.logits, base.logits).maxAbs).toBeGreaterThan(0.1);
  });

  it('honours attention_mask: a left-padded row gives what the unpadded sequence gives alone', async () => {
    const short = SEQUENCE.slice(0, 7);
    const long = SEQUENCE.slice(5, 15);
    const pad = long.length - short.length;
    const padded = [...Array<number>(pad).fill(0), ...short];
    const mask = [...Array<number>(pad).fill(0), ...short.map(() => 1)];
    // HF's position_ids for left padding: cumsum(mask) - 1, padding set to 1
    const positions = mask.map((_, i) => (i < pad ? 1 : i - pad));
    const batch = await runStep(model, {
      ids: [long, padded],
      attentionMask: [long.map(() => 1), mask],
      positions: [long.map((_, i) => i), positions],
    });
    const alone = await runStep(model, { ids: [short] });
    const { vocabSize } = model.geometry;
    expect(arrayDifference(logitsAt(batch, vocabSize, long.length, 1, long.length - 1), lastLogits(alone, short.length)).maxAbs)
      .toBeLessThan(TOLERANCE.logits);

    // one decode step on the padded cache
    const next = [SEQUENCE[20], SEQUENCE[21]];
    const batchStep = await runStep(model, {
      ids: [[next[0]], [next[1]]],
      past: batch.present,
      attentionMask: [[...long.map(() => 1), 1], [...mask, 1]],
      positions: [[long.length], [short.length]],
    });
    const aloneStep = await runStep(model, { ids: [[next[1]]], past: alone.present });
    expect(arrayDifference(logitsAt(batchStep, vocabSize, 1, 1, 0), lastLogits(aloneStep, 1)).maxAbs).toBeLessThan(TOLERANCE.logits);
  });

  it('has outlier key channels in every layer, about 10x the median channel', async () => {
    const step = await runStep(model, { ids: [SEQUENCE] });
    const { headDim, numLayers } = model.geometry;
    for (let layer = 0; layer < numLayers; layer++) {
      const keys = step.present.get(`present.${layer}.key`)?.data as Float32Array; // [1, kvHeads, seq, headDim]
      const meanAbs = new Float64Array(headDim);
      for (let i = 0; i < keys.length; i++) meanAbs[i % headDim] += Math.abs(keys[i]) / (keys.length / headDim);
      const median = [...meanAbs].sort((a, b) => a - b)[headDim / 2];
      const outliers = model.geometry.outlierKeyChannels[layer];
      expect(outliers).toHaveLength(4);
      for (const channel of outliers) expect(meanAbs[channel], `layer ${layer} channel ${channel}`).toBeGreaterThan(5 * median);
      // and no other channel stands out
      const others = [...meanAbs].filter((_, channel) => !outliers.includes(channel));
      expect(Math.max(...others)).toBeLessThan(2 * median);
    }
  });

  it('decodes greedily to varied, printable text', async () => {
    const tokenizer = new Tokenizer(
      JSON.parse(readFileSync(join(model.folder, 'tokenizer.json'), 'utf8')) as ConstructorParameters<typeof Tokenizer>[0],
      JSON.parse(readFileSync(join(model.folder, 'tokenizer_config.json'), 'utf8')) as ConstructorParameters<typeof Tokenizer>[1],
    );
    const prompt = tokenizer.encode('Once upon a time').ids;
    expect(prompt[0]).toBe(1); // <s>
    const ids = await greedy(model, prompt, 32);
    expect(new Set(ids).size).toBeGreaterThanOrEqual(5);
    // no run of one token taking over the end
    expect(new Set(ids.slice(16)).size).toBeGreaterThanOrEqual(5);
    const text = tokenizer.decode(ids);
    expect(text).toMatch(/^[\t\n\x20-\x7e]+$/);
  });

  it('keeps muted tokens (specials, unprintable bytes) out of reach of sampling too', async () => {
    const step = await runStep(model, { ids: [SEQUENCE] });
    const row = lastLogits(step, SEQUENCE.length);
    const muted = new Set(model.geometry.mutedTokenIds);
    expect(muted.has(2)).toBe(true); // </s>
    const top = row[argmax(row)];
    for (const id of muted) expect(row[id], `token ${id}`).toBeLessThan(top - 50);
  });
});
