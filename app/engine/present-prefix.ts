import type { DecoderIo } from './decoder-io.js';
import type { SessionOutputs } from './decoder-session.js';
import { GenerationError } from './engine-errors.js';
import { floatTensor, type HostTensor } from './host-tensor.js';
import { copySlabRows } from './slab-rows.js';

/**
 * A run's outputs with every `present.*` cut to its first `rows` sequence positions (copies, in the
 * graph's dtype), the other outputs as they are: what a lane would have read had the run stopped
 * after those tokens. Used to hand one run's tokens to the cache in several updates (StepRunner).
 * Present is `[1, kvHeads, seq, headDim]` (kv-present.ts), so each slab keeps its first `rows` rows.
 */
export function outputsWithPresentPrefix(outputs: SessionOutputs, io: DecoderIo, rows: number): SessionOutputs {
  const cut: Record<string, HostTensor> = { ...outputs };
  for (const layer of io.kvLayers) {
    for (const name of [layer.presentKey, layer.presentValue]) {
      const tensor = outputs[name];
      // Missing or malformed presents are the lane's to report, with its own message.
      if (tensor === undefined || tensor.dims.length !== 4 || (tensor.type !== 'float32' && tensor.type !== 'float16')) continue;
      const [batch, heads, seq, width] = tensor.dims as [number, number, number, number];
      if (rows > seq) throw new GenerationError(`\`${name}\` has ${seq} positions; cannot cut it to ${rows}.`);
      const slabs = batch * heads;
      const data = tensor.type === 'float32' ? new Float32Array(slabs * rows * width) : new Uint16Array(slabs * rows * width);
      copySlabRows(tensor.data, seq, 0, data, rows, 0, rows, slabs, width);
      cut[name] = floatTensor(tensor.type, [batch, heads, rows, width], data);
    }
  }
  return cut;
}
