import type { DecoderIo } from './decoder-io.js';
import type { SessionOutputs } from './decoder-session.js';
import { GenerationError } from './engine-errors.js';
import { floatTensor, type HostTensor } from './host-tensor.js';
import { copySlabRows } from './slab-rows.js';

/**
 * A run's outputs with every `present.*` cut to its first `rows` sequence positions (copies, in the
 * graph's dtype), the other outputs as they are: what a lane would have read had the run stopped
 * after those tokens. Used to hand one run's tokens to the cache in several updates (StepRunner).
 * Per-layer presents are `[1, kvHeads, seq, headDim]` (kv-present.ts); GPT-2's combined present is
 * `[2, 1, kvHeads, seq, headDim]` (kv-packing.ts), keys then values. Either way the sequence axis is
 * −2, so every `[seq, headDim]` slab (2·kvHeads of them when combined) keeps its first `rows` rows.
 */
export function outputsWithPresentPrefix(outputs: SessionOutputs, io: DecoderIo, rows: number): SessionOutputs {
  const cut: Record<string, HostTensor> = { ...outputs };
  // A combined layer names one present for keys and values: cut it once.
  const names = new Set(io.kvLayers.flatMap((layer) => [layer.presentKey, layer.presentValue]));
  for (const name of names) {
    const tensor = outputs[name];
    // Missing or malformed presents are the lane's to report, with its own message.
    if (tensor === undefined || (tensor.dims.length !== 4 && tensor.dims.length !== 5) || (tensor.type !== 'float32' && tensor.type !== 'float16')) continue;
    const dims = tensor.dims;
    const seq = dims[dims.length - 2]!;
    const width = dims[dims.length - 1]!;
    if (rows > seq) throw new GenerationError(`\`${name}\` has ${seq} positions; cannot cut it to ${rows}.`);
    const slabs = dims.slice(0, -2).reduce((a, b) => a * b, 1);
    const data = tensor.type === 'float32' ? new Float32Array(slabs * rows * width) : new Uint16Array(slabs * rows * width);
    copySlabRows(tensor.data, seq, 0, data, rows, 0, rows, slabs, width);
    cut[name] = floatTensor(tensor.type, [...dims.slice(0, -2), rows, width], data);
  }
  return cut;
}
