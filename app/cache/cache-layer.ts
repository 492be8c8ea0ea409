import type { KvTensor } from '../tensor/kv-tensor.js';
import type { LayerMemory } from './layer-memory.js';
import type { QuantizeEvent } from './quantize-event.js';

/** The keys and values attention uses after an update, `[batch, kvHeads, seqLength, headDim]` each. */
export interface KvPair {
  readonly key: KvTensor;
  readonly value: KvTensor;
}

/**
 * One decoder layer's KV cache (STYLE.md §7: update, seqLength, stats, dispose).
 *
 * The tensors `update` returns may be views of the layer's own buffers: they hold exactly what
 * transformers returns, and stay valid until the layer's next `update` or `dispose`. Copy them to keep them longer.
 */
export interface CacheLayer {
  readonly kind: 'quantized' | 'dynamic';
  update(key: KvTensor, value: KvTensor): KvPair;
  /** tokens seen so far (`get_seq_length()`) */
  seqLength(): number;
  memory(): LayerMemory;
  /** every quantize call so far, in order; empty for a dynamic layer */
  readonly events: readonly QuantizeEvent[];
  readonly flushCount: number;
  readonly disposed: boolean;
  /** Releases the buffers; later calls to `update` throw. Idempotent. */
  dispose(): void;
}
