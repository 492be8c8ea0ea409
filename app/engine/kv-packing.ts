import type { KvLayerIo } from './decoder-io.js';
import type { SessionOutputs } from './decoder-session.js';
import { GenerationError } from './engine-errors.js';
import { floatTensor, type FloatHostTensor, type HostTensor } from './host-tensor.js';
import { readPresent, validRows, type KvDims } from './kv-present.js';

/** One layer's keys and values as the cache sees them: `[1, kvHeads, seq, headDim]` each. */
export interface KvPair {
  readonly key: FloatHostTensor;
  readonly value: FloatHostTensor;
}

/**
 * Where one layer's KV tensors meet the graph's packing (the cache boundary's last step before the
 * feeds). Per-layer graphs take keys and values as two tensors, passed as they are. GPT-2's combined
 * `past_N` is `[2, 1, kvHeads, seq, headDim]`, keys then values: `read` splits a present into two
 * views (no copy), and `feed` joins a pair back, again without a copy when the two are still the
 * halves of the last present or otherwise adjacent in one buffer (the quantized cache's adopted
 * present); only a pair from two different buffers (a dequantized store after a quantize event) is
 * copied, once, into a join buffer this object owns and reuses.
 */
export class LayerKvPacking {
  readonly #io: KvLayerIo;
  readonly #dims: { readonly key: KvDims; readonly value: KvDims };
  readonly #mayExceed: boolean;
  /** combined: the last present read, and the views `read` split it into */
  #whole: FloatHostTensor | null = null;
  #wholeKey: ArrayBufferView | null = null;
  #wholeValue: ArrayBufferView | null = null;
  #join: Float32Array | Uint16Array | null = null;

  constructor(io: KvLayerIo, dims: { readonly key: KvDims; readonly value: KvDims }, presentMayExceedValidLength: boolean) {
    this.#io = io;
    this.#dims = dims;
    this.#mayExceed = presentMayExceedValidLength;
    if (io.packing === 'combined' && (dims.key.kvHeads !== dims.value.kvHeads || dims.key.headDim !== dims.value.headDim)) {
      throw new GenerationError(`${io.pastKey} packs keys and values in one tensor, so both must have the same heads and head size.`);
    }
  }

  /** A run's present keys and values for `seq` = past + new positions (only the valid rows, genai share-buffer graphs). */
  read(outputs: SessionOutputs, seq: number): KvPair {
    const io = this.#io;
    if (io.packing === 'per-layer') {
      return {
        key: readPresent(outputs, io.presentKey, io.dtype, this.#dims.key, seq, this.#mayExceed),
        value: readPresent(outputs, io.presentValue, io.dtype, this.#dims.value, seq, this.#mayExceed),
      };
    }
    const present = this.#combinedPresent(outputs, seq);
    const half = present.data.length / 2;
    const dims = [1, this.#dims.key.kvHeads, seq, this.#dims.key.headDim];
    const key = floatTensor(present.type, dims, present.data.subarray(0, half));
    const value = floatTensor(present.type, dims, present.data.subarray(half));
    this.#whole = present;
    this.#wholeKey = key.data;
    this.#wholeValue = value.data;
    return { key, value };
  }

  /** Adds the layer's past inputs for `key`/`value` to `feeds`; returns the bytes fed. */
  feed(feeds: Record<string, HostTensor>, key: FloatHostTensor, value: FloatHostTensor): number {
    const io = this.#io;
    if (io.packing === 'per-layer') {
      feeds[io.pastKey] = key;
      feeds[io.pastValue] = value;
      return key.data.byteLength + value.data.byteLength;
    }
    const joined = this.#joined(key, value);
    feeds[io.pastKey] = joined;
    return joined.data.byteLength;
  }

  /** Whether the layer's join buffer is `buffer` (never a session output, but asked for completeness). */
  references(buffer: ArrayBufferLike): boolean {
    return this.#join?.buffer === buffer;
  }

  dispose(): void {
    this.#whole = null;
    this.#wholeKey = null;
    this.#wholeValue = null;
    this.#join = null;
  }

  #combinedPresent(outputs: SessionOutputs, seq: number): FloatHostTensor {
    const io = this.#io;
    const tensor = outputs[io.presentKey];
    const { kvHeads, headDim } = this.#dims.key;
    if (tensor === undefined) {
      throw new GenerationError(`the graph returned no \`${io.presentKey}\` output; the KV cache cannot be updated.`, 'Use an export that returns present_N for every past_N.');
    }
    if (tensor.type !== io.dtype) {
      throw new GenerationError(`\`${io.presentKey}\` came back as ${tensor.type}, but the graph declares ${io.dtype} KV tensors.`, 'Re-export the model with one KV dtype.');
    }
    const [two, batch, heads, length = -1, width] = tensor.dims;
    const lengthFits = length === seq || (this.#mayExceed && length > seq);
    if (tensor.dims.length !== 5 || two !== 2 || batch !== 1 || heads !== kvHeads || !lengthFits || width !== headDim) {
      throw new GenerationError(
        `\`${io.presentKey}\` has shape [${tensor.dims.join(', ')}], expected [2, 1, ${kvHeads}, ${seq}, ${headDim}] ` +
        '(keys and values, batch 1, num_key_value_heads, past + new tokens, head_dim from the config).',
        'Check that the config belongs to this graph (num_key_value_heads, head_dim).',
      );
    }
    if (length === seq) return tensor;
    // A share-buffer graph: [2·kvHeads] slabs of `length` rows, of which the first `seq` are valid.
    return floatTensor(tensor.type, [2, 1, kvHeads, seq, headDim], validRows(tensor.data, 2 * kvHeads, length, seq, headDim));
  }

  #joined(key: FloatHostTensor, value: FloatHostTensor): FloatHostTensor {
    const [, kvHeads = 0, seq = 0, headDim = 0] = key.dims;
    const dims = [2, 1, kvHeads, seq, headDim];
    if (this.#whole !== null && key.data === this.#wholeKey && value.data === this.#wholeValue) return this.#whole;
    const k = key.data;
    const v = value.data;
    if (key.type === value.type && k.buffer === v.buffer && k.length === v.length && k.byteOffset + k.byteLength === v.byteOffset) {
      // Adjacent halves of one buffer (the quantized cache adopted the last present): one view over both.
      return key.type === 'float32'
        ? floatTensor('float32', dims, new Float32Array(k.buffer, k.byteOffset, 2 * k.length))
        : floatTensor('float16', dims, new Uint16Array(k.buffer, k.byteOffset, 2 * k.length));
    }
    const length = k.length + v.length;
    let join = this.#join;
    if (join === null || join.length < length || (key.type === 'float32') !== join instanceof Float32Array) {
      const capacity = Math.max(length, 2 * (join?.length ?? 0));
      join = key.type === 'float32' ? new Float32Array(capacity) : new Uint16Array(capacity);
      this.#join = join;
    }
    const out = join.subarray(0, length);
    (out as Float32Array).set(k as Float32Array, 0);
    (out as Float32Array).set(v as Float32Array, k.length);
    return floatTensor(key.type, dims, out);
  }
}
