import { describe, expect, it } from 'vitest';
import type { DecoderIo } from '../engine/decoder-io.js';
import type { DecoderSession, SessionFeeds, SessionOutputs } from '../engine/decoder-session.js';
import type { KvLane } from '../engine/kv-lane.js';
import { headLogits, withHeadInputDefault } from './model-head.js';

const HEAD = { name: 'hidden_head_rows', hiddenSize: 2 };
const VOCAB = 3;

/** A session whose logits are a row of -1 for the token fed, then per fed hidden row 10 × that row's sum in every column. */
function fakeSession(seen: SessionFeeds[]): DecoderSession {
  return {
    inputs: [{ name: 'input_ids', type: 'int64', shape: [1, 'seq'] }, { name: HEAD.name, type: 'float32', shape: [1, 'head_rows', 2] }],
    outputs: [{ name: 'logits', type: 'float32', shape: [1, 'seq', VOCAB] }],
    executionProvider: 'cpu',
    run: (feeds: SessionFeeds): Promise<SessionOutputs> => {
      seen.push(feeds);
      const head = feeds[HEAD.name]!;
      const rows = head.dims[1]!;
      const data = new Float32Array((1 + rows) * VOCAB).fill(-1);
      for (let r = 0; r < rows; r++) {
        const values = head.data as Float32Array;
        data.fill(10 * (values[2 * r]! + values[2 * r + 1]!), (1 + r) * VOCAB, (2 + r) * VOCAB);
      }
      return Promise.resolve({ logits: { type: 'float32', dims: [1, 1 + rows, VOCAB], data } });
    },
    dispose: () => Promise.resolve(),
  };
}

const IO = { inputIds: 'input_ids', inputIdsType: 'int64', attentionMask: null, positionIds: null, logitsToKeep: null, useCacheBranch: null, logits: 'logits' } as unknown as DecoderIo;

describe('the LM head on the model\'s own session', () => {
  it('feeds the head input zero rows on every other run and hides it from the engine', async () => {
    const seen: SessionFeeds[] = [];
    const session = withHeadInputDefault(fakeSession(seen), HEAD);
    expect(session.inputs.map((input) => input.name)).toEqual(['input_ids']);
    await session.run({ input_ids: { type: 'int64', dims: [1, 1], data: BigInt64Array.of(5n) } });
    expect(seen[0]![HEAD.name]).toEqual({ type: 'float32', dims: [1, 0, 2], data: new Float32Array(0) });
  });

  it('returns the fed rows\' logits after the run\'s own row, and disposes the lane', async () => {
    const seen: SessionFeeds[] = [];
    let disposed = 0;
    const lane = { seqLength: 0, addFeeds: () => 0, dispose: () => { disposed++; } } as unknown as KvLane;
    const logits = await headLogits(withHeadInputDefault(fakeSession(seen), HEAD), IO, lane, HEAD, Float32Array.of(1, 2, 3, 4));
    expect([...logits]).toEqual([30, 30, 30, 70, 70, 70]);
    expect(seen[0]![HEAD.name]!.dims).toEqual([1, 2, 2]);
    expect(disposed).toBe(1);
  });

  it('refuses hidden values that are not whole rows', async () => {
    const lane = { seqLength: 0, addFeeds: () => 0, dispose: () => undefined } as unknown as KvLane;
    await expect(headLogits(fakeSession([]), IO, lane, HEAD, Float32Array.of(1, 2, 3))).rejects.toThrow('3 hidden values are not rows of 2');
  });
});
