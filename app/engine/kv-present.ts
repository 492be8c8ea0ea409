import type { SessionOutputs } from './decoder-session.js';
import { GenerationError } from './engine-errors.js';
import { floatTensor, type FloatHostTensor } from './host-tensor.js';

/** The fixed dims of one layer's keys or values: `[1, kvHeads, seq, headDim]`. */
export interface KvDims {
  readonly kvHeads: number;
  readonly headDim: number;
}

/**
 * A `present.*` output, checked against what the cache expects: the graph's dtype, batch 1, the
 * layer's heads and head size, and `seq` = past + new. A graph that returns anything else would
 * corrupt the cache silently, so it stops the run with the shapes spelled out.
 */
export function readPresent(
  outputs: SessionOutputs, name: string, type: 'float32' | 'float16', dims: KvDims, seq: number, mayExceedValidLength = false,
): FloatHostTensor {
  const tensor = outputs[name];
  if (tensor === undefined) {
    throw new GenerationError(`the graph returned no \`${name}\` output; the KV cache cannot be updated.`, 'Use an export that returns present.{i}.key/value.');
  }
  if (tensor.type !== type) {
    throw new GenerationError(`\`${name}\` came back as ${tensor.type}, but the graph declares ${type} KV tensors.`, 'Re-export the model with one KV dtype.');
  }
  const [batch, heads, length = -1, width] = tensor.dims;
  const lengthFits = length === seq || (mayExceedValidLength && length > seq);
  if (tensor.dims.length !== 4 || batch !== 1 || heads !== dims.kvHeads || !lengthFits || width !== dims.headDim) {
    throw new GenerationError(
      `\`${name}\` has shape [${tensor.dims.join(', ')}], expected [1, ${dims.kvHeads}, ${seq}, ${dims.headDim}] ` +
      '(batch 1, num_key_value_heads, past + new tokens, head_dim from the config).',
      'Check that the config belongs to this graph (num_key_value_heads, head_dim).',
    );
  }
  if (length === seq) return tensor;
  // genai's share-buffer graphs: the present is the whole buffer; the first `seq` rows of each head are valid.
  return floatTensor(tensor.type, [1, dims.kvHeads, seq, dims.headDim], validRows(tensor.data, dims.kvHeads, length, seq, dims.headDim));
}

/** The first `seq` of `length` rows of each of `slabs` slabs `[length, width]`, copied into a new array. */
export function validRows<T extends Float32Array | Uint16Array>(data: T, slabs: number, length: number, seq: number, width: number): T {
  const out = (data instanceof Float32Array ? new Float32Array(slabs * seq * width) : new Uint16Array(slabs * seq * width)) as T;
  for (let s = 0; s < slabs; s++) out.set(data.subarray(s * length * width, (s * length + seq) * width), s * seq * width);
  return out;
}
