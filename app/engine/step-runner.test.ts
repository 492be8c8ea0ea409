import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import { readDecoderIo } from './decoder-io.js';
import { planRunCache } from './plan-run-cache.js';
import { createRunLane } from './run-lane.js';
import { StepInputs } from './step-inputs.js';
import { StepRunner } from './step-runner.js';
import { TOY, ToyDecoder, toyConfig, type ToyRun } from './test-support/toy-decoder.js';
import type { RunSettings } from './types.js';

const QUANTO4_R3: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, nbits: 4, groupSize: 8, residualLength: 3 };
const HQQ2_R0: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 2, groupSize: 8, residualLength: 0 };

function runner(session: ToyDecoder, quantization: QuantizedCacheSettings): StepRunner {
  const io = readDecoderIo(session.inputs, session.outputs, 'toy.onnx').io!;
  const settings = { cacheMode: 'quantized', quantization } as RunSettings;
  const lane = createRunLane(io, toyConfig(), quantization, planRunCache(toyConfig(), settings, 5), () => 0);
  return new StepRunner({ session, inputs: new StepInputs(io, session.inputs), io, lane, now: () => 0 });
}

/** The past part of what attention saw in a run: per layer, each head's first `pastLength` rows. */
function pastSeen(run: ToyRun): number[][] {
  return run.attended.flatMap(({ key, value }) => [key, value].map((rows) => {
    const total = rows.length / (TOY.kvHeads * TOY.headDim);
    const out: number[] = [];
    for (let h = 0; h < TOY.kvHeads; h++) out.push(...rows.subarray(h * total * TOY.headDim, (h * total + run.pastLength) * TOY.headDim));
    return out;
  }));
}

describe('StepRunner: a chunk that ends at a flush step leaves the cache as token-by-token steps do (spec §1.3)', () => {
  it.each([
    ['quanto 4-bit, R = 3 (flush every 3rd step)', QUANTO4_R3, 3],
    ['hqq 2-bit, R = 0 (flush every 2nd step)', HQQ2_R0, 2],
  ] as const)('%s', async (_name, quantization, cycle) => {
    const prompt = [1, 5, 9, 3, 7];
    const text = [4, 8, 2, 6, 11, 13, 10, 12, 14, 3, 5, 9];
    const single = new ToyDecoder();
    const bySingle = runner(single, quantization);
    await bySingle.step(prompt);
    for (const token of text) await bySingle.step([token]);

    const chunked = new ToyDecoder();
    const byChunk = runner(chunked, quantization);
    await byChunk.step(prompt);
    const chunkStarts: number[] = [];
    for (let start = 0; start < text.length; start += cycle) {
      const tokens = text.slice(start, start + cycle);
      chunkStarts.push(start);
      const outcome = await byChunk.step(tokens, 'all', tokens.length === cycle ? [cycle - 1, 1] : [tokens.length]);
      expect(outcome.logits).toHaveLength(tokens.length * TOY.vocab);
      // A full chunk ends on a flush step: every layer reports it.
      if (tokens.length === cycle) expect(outcome.absorbed.flushes.map((f) => f.kind)).toEqual(['flush', 'flush']);
    }
    // Each chunk saw the past that the token-by-token run saw at the chunk's first token: deq(Q) of the same store.
    for (const [index, start] of chunkStarts.entries()) {
      expect(pastSeen(chunked.runs[1 + index]!), `chunk at ${start}`).toEqual(pastSeen(single.runs[1 + start]!));
    }
    expect(byChunk.lane.flushCounts()).toEqual(bySingle.lane.flushCounts());
    expect(byChunk.lane.memory().map((m) => m?.totalBytes)).toEqual(bySingle.lane.memory().map((m) => m?.totalBytes));
    expect(byChunk.lane.seqLength).toBe(bySingle.lane.seqLength);
  });

  it('refuses updates that do not add up to the tokens fed', async () => {
    const step = runner(new ToyDecoder(), QUANTO4_R3);
    await step.step([1, 2, 3]);
    await expect(step.step([4, 5], 'last', [1, 2])).rejects.toThrow(/add up/);
  });
});

describe('StepInputs: num_logits_to_keep', () => {
  it('is 1 by default and the rows asked for otherwise', () => {
    const session = new ToyDecoder();
    const inputs = [...session.inputs, { name: 'num_logits_to_keep', type: 'int64', shape: [] }];
    const io = readDecoderIo(inputs, session.outputs, 'toy.onnx').io!;
    const stepInputs = new StepInputs(io, inputs);
    expect([...stepInputs.feeds([1, 2, 3], 0)['num_logits_to_keep']!.data as BigInt64Array]).toEqual([1n]);
    expect([...stepInputs.feeds([1, 2, 3], 0, 3)['num_logits_to_keep']!.data as BigInt64Array]).toEqual([3n]);
    expect(stepInputs.feeds([1, 2, 3], 0, 3)['num_logits_to_keep']!.dims).toEqual([]);
  });
});
