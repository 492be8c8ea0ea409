import type { DecoderSession } from '../../../engine/decoder-session.js';
import type { HostTensor } from '../../../engine/host-tensor.js';

/** One prefill step of a few tokens on an empty cache: every MatMul weight is read (shared-weights tests). */
export async function prefillStep(session: DecoderSession): Promise<void> {
  const feeds: Record<string, HostTensor> = {};
  const rows = 4;
  for (const input of session.inputs) {
    if (input.name.startsWith('past_key_values.')) {
      feeds[input.name] = { type: 'float32', dims: [1, Number(input.shape[1]), 0, Number(input.shape[3])], data: new Float32Array(0) };
    } else if (input.name === 'num_logits_to_keep') {
      feeds[input.name] = { type: 'int64', dims: [], data: BigInt64Array.of(1n) };
    } else {
      const ids = input.name === 'input_ids' ? (i: number) => BigInt(3 + i) : input.name === 'position_ids' ? (i: number) => BigInt(i) : () => 1n;
      feeds[input.name] = { type: 'int64', dims: [1, rows], data: BigInt64Array.from({ length: rows }, (_, i) => ids(i)) };
    }
  }
  const outputs = await session.run(feeds);
  session.release?.(Object.values(outputs));
}
