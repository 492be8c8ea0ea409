import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HostTensor } from '../../engine/host-tensor.js';
import { storiesDir } from '../test-support/stories.js';
import { createOrtDecoderSession } from './ort-decoder-session.js';

/** stories260k's prefill of BOS: ids [1], empty past of [1, 4, 0, 8] per layer (README). */
async function prefill(session: Awaited<ReturnType<typeof createOrtDecoderSession>>): Promise<Record<string, HostTensor>> {
  const feeds: Record<string, HostTensor> = {
    input_ids: { type: 'int64', dims: [1, 1], data: BigInt64Array.from([1n]) },
    attention_mask: { type: 'int64', dims: [1, 1], data: BigInt64Array.from([1n]) },
    position_ids: { type: 'int64', dims: [1, 1], data: BigInt64Array.from([0n]) },
  };
  for (const input of session.inputs) {
    if (!input.name.startsWith('past_key_values.')) continue;
    feeds[input.name] = { type: 'float32', dims: [1, Number(input.shape[1]), 0, Number(input.shape[3])], data: new Float32Array(0) };
  }
  for (const name of Object.keys(feeds)) if (!session.inputs.some((i) => i.name === name)) delete feeds[name];
  return { ...(await session.run(feeds)) };
}

describe('OrtDecoderSession.release', () => {
  it('frees its own outputs at once and leaves other tensors alone', async () => {
    const session = await createOrtDecoderSession(join(storiesDir(), 'onnx', 'model.onnx'), { executionProvider: 'cpu' });
    try {
      const outputs = await prefill(session);
      const present = outputs['present.0.key']!;
      const logits = outputs['logits']!;
      expect(present.data.length).toBeGreaterThan(0);
      const foreign: HostTensor = { type: 'float32', dims: [4], data: new Float32Array(4).fill(1) };
      session.release!([present, foreign]);
      expect(present.data.length).toBe(0);
      expect(present.data.buffer.byteLength).toBe(0);
      expect([...foreign.data]).toEqual([1, 1, 1, 1]);
      expect(logits.data.length).toBe(512);
      // Releasing again is a no-op (the session forgot the tensor).
      session.release!([present]);
      expect(present.data.length).toBe(0);
    } finally {
      await session.dispose();
    }
  });
});
