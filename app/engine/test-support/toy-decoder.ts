import { parseModelConfig } from '../../config/parse-model-config.js';
import type { ModelConfig } from '../../config/model-config.js';
import { float16BitsToNumber, numberToFloat16Bits } from '../../tensor/float16.js';
import type { DecoderSession, SessionFeeds, SessionOutputs, ValueInfo } from '../decoder-session.js';
import type { HostTensor } from '../host-tensor.js';

/**
 * A tiny decoder "graph" in plain JavaScript with the Optimum I/O signature: 2 layers, 2 KV heads,
 * head_dim 4, vocab 16. Each step's new K/V rows are a fixed function of (token, position, layer);
 * present = cat(past, new) as an ONNX export computes it; logits depend on every row attention sees,
 * so a quantized history changes them. It records what attention saw at every step.
 */
export const TOY = { layers: 2, kvHeads: 2, headDim: 4, vocab: 16 } as const;

export function toyConfig(): ModelConfig {
  return parseModelConfig(JSON.stringify({
    model_type: 'llama', num_hidden_layers: TOY.layers, num_attention_heads: TOY.kvHeads, num_key_value_heads: TOY.kvHeads,
    head_dim: TOY.headDim, hidden_size: TOY.kvHeads * TOY.headDim, vocab_size: TOY.vocab,
  }), 'toy/config.json');
}

export interface ToyOptions {
  readonly kvDtype?: 'float32' | 'float16';
  /** adds a hybrid conv state `past_conv.0` [batch, 3] → `present_conv.0` = past + 1 */
  readonly convState?: boolean;
  /** called before each run resolves (for cancellation tests) */
  readonly onRun?: (runIndex: number) => void;
  /**
   * implements `release`: a released output is poisoned (NaN), and feeding one back, releasing one
   * twice or releasing a tensor the toy did not return throws
   */
  readonly release?: boolean;
}

/** What attention saw in one run: per layer, K and V = cat(past, new), as float values. */
export interface ToyRun {
  readonly inputIds: number[];
  readonly pastLength: number;
  readonly attended: { key: Float32Array; value: Float32Array }[];
  readonly newRows: { key: Float32Array; value: Float32Array }[];
  /** the conv state fed, when the toy has one */
  readonly convState: Float32Array | null;
}

export class ToyDecoder implements DecoderSession {
  readonly inputs: ValueInfo[];
  readonly outputs: ValueInfo[];
  readonly executionProvider = 'cpu' as const;
  readonly runs: ToyRun[] = [];
  readonly #dtype: 'float32' | 'float16';
  readonly #onRun: ((runIndex: number) => void) | undefined;
  disposed = false;
  /** every output returned so far, and which of them were released (with `release: true`) */
  readonly returned = new Set<HostTensor>();
  readonly released = new Set<HostTensor>();
  readonly release?: (outputs: readonly HostTensor[]) => void;

  constructor(options: ToyOptions = {}) {
    this.#dtype = options.kvDtype ?? 'float32';
    this.#onRun = options.onRun;
    if (options.release === true) this.release = (outputs) => this.#release(outputs);
    const kvShape = ['batch_size', TOY.kvHeads, 'past_sequence_length', TOY.headDim];
    const presentShape = ['batch_size', TOY.kvHeads, 'past_sequence_length + sequence_length', TOY.headDim];
    this.inputs = [
      { name: 'input_ids', type: 'int64', shape: ['batch_size', 'sequence_length'] },
      { name: 'attention_mask', type: 'int64', shape: ['batch_size', 'past_sequence_length + sequence_length'] },
      { name: 'position_ids', type: 'int64', shape: ['batch_size', 'sequence_length'] },
      ...range(TOY.layers).flatMap((i) => ['key', 'value'].map((part) => ({ name: `past_key_values.${i}.${part}`, type: this.#dtype, shape: kvShape }))),
      ...(options.convState === true ? [{ name: 'past_conv.0', type: 'float32', shape: ['batch_size', 3] }] : []),
    ];
    this.outputs = [
      { name: 'logits', type: 'float32', shape: ['batch_size', 'sequence_length', TOY.vocab] },
      ...range(TOY.layers).flatMap((i) => ['key', 'value'].map((part) => ({ name: `present.${i}.${part}`, type: this.#dtype, shape: presentShape }))),
      ...(options.convState === true ? [{ name: 'present_conv.0', type: 'float32', shape: ['batch_size', 3] }] : []),
    ];
  }

  async run(feeds: SessionFeeds): Promise<SessionOutputs> {
    if (this.disposed) throw new Error('disposed');
    for (const name in feeds) if (this.released.has(feeds[name]!)) throw new Error(`${name} was fed after it was released`);
    const ids = [...(feeds['input_ids']!.data as BigInt64Array)].map(Number);
    const positions = [...(feeds['position_ids']!.data as BigInt64Array)].map(Number);
    const n = ids.length;
    const pastLength = feeds['past_key_values.0.key']!.dims[2]!;
    if (feeds['attention_mask']!.dims[1] !== pastLength + n) throw new Error('mask length');
    const outputs: Record<string, HostTensor> = {};
    const conv = feeds['past_conv.0'];
    const run: ToyRun = { inputIds: ids, pastLength, attended: [], newRows: [], convState: conv === undefined ? null : Float32Array.from(conv.data as Float32Array) };
    if (conv !== undefined) outputs['present_conv.0'] = { type: 'float32', dims: [1, 3], data: (conv.data as Float32Array).map((v) => v + 1) };
    let score = 0;
    for (let layer = 0; layer < TOY.layers; layer++) {
      const parts: { key: Float32Array; value: Float32Array } = { key: new Float32Array(0), value: new Float32Array(0) };
      const news: { key: Float32Array; value: Float32Array } = { key: new Float32Array(0), value: new Float32Array(0) };
      for (const part of ['key', 'value'] as const) {
        const past = this.#values(feeds[`past_key_values.${layer}.${part}`]!);
        const fresh = this.#round(newRows(ids, positions, layer, part === 'key' ? 0 : 1));
        const total = pastLength + n;
        const present = new Float32Array(TOY.kvHeads * total * TOY.headDim);
        for (let h = 0; h < TOY.kvHeads; h++) {
          present.set(past.subarray(h * pastLength * TOY.headDim, (h + 1) * pastLength * TOY.headDim), h * total * TOY.headDim);
          present.set(fresh.subarray(h * n * TOY.headDim, (h + 1) * n * TOY.headDim), (h * total + pastLength) * TOY.headDim);
        }
        parts[part] = present.slice(); // a record of its own: the output itself may be released
        news[part] = fresh;
        outputs[`present.${layer}.${part}`] = this.#tensor([1, TOY.kvHeads, total, TOY.headDim], present);
        for (let i = 0; i < present.length; i++) score += present[i]! * Math.cos(0.37 * i + layer + (part === 'key' ? 0 : 1.3));
      }
      run.attended.push(parts);
      run.newRows.push(news);
    }
    const logits = new Float32Array(n * TOY.vocab);
    for (let t = 0; t < n; t++) {
      for (let v = 0; v < TOY.vocab; v++) logits[t * TOY.vocab + v] = Math.sin(0.7 * v + 0.3 * score + 0.11 * (ids[t]! + positions[t]!)) * 4;
    }
    outputs['logits'] = { type: 'float32', dims: [1, n, TOY.vocab], data: logits };
    this.runs.push(run);
    for (const name in outputs) this.returned.add(outputs[name]!);
    this.#onRun?.(this.runs.length - 1);
    return outputs;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }

  #release(outputs: readonly HostTensor[]): void {
    for (const output of outputs) {
      if (!this.returned.has(output)) throw new Error('released a tensor the session did not return');
      if (this.released.has(output)) throw new Error('released an output twice');
      this.released.add(output);
      if (output.type === 'int64') output.data.fill(-1n);
      else if (output.type === 'float32') output.data.fill(Number.NaN);
      else output.data.fill(0x7e00); // binary16 NaN
    }
  }

  #values(tensor: HostTensor): Float32Array {
    if (tensor.type === 'float32') return tensor.data;
    if (tensor.type === 'float16') return Float32Array.from(tensor.data, (bits) => float16BitsToNumber(bits));
    throw new Error('int64 past');
  }

  #round(values: Float32Array): Float32Array {
    return this.#dtype === 'float16' ? values.map((v) => float16BitsToNumber(numberToFloat16Bits(v))) : values;
  }

  #tensor(dims: number[], values: Float32Array): HostTensor {
    if (this.#dtype === 'float32') return { type: 'float32', dims, data: values };
    return { type: 'float16', dims, data: Uint16Array.from(values, (v) => numberToFloat16Bits(v)) };
  }
}

/** `[kvHeads, n, headDim]` new rows: a smooth function of token, position and layer, with an outlier channel. */
export function newRows(ids: readonly number[], positions: readonly number[], layer: number, part: number): Float32Array {
  const n = ids.length;
  const out = new Float32Array(TOY.kvHeads * n * TOY.headDim);
  for (let h = 0; h < TOY.kvHeads; h++) {
    for (let t = 0; t < n; t++) {
      for (let d = 0; d < TOY.headDim; d++) {
        const base = Math.sin(1.3 * ids[t]! + 0.05 * positions[t]! * (d + 1) + 0.7 * h + 0.9 * layer + 2.1 * part + d);
        out[(h * n + t) * TOY.headDim + d] = d === 1 ? 8 * base : base;
      }
    }
  }
  return out;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
