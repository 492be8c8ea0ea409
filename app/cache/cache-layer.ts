import type { KvTensor } from '../tensor/kv-tensor.js';
import type { LayerMemory } from './layer-memory.js';
import type { QuantizeEvent } from './quantize-event.js';

/** The keys and values attention uses after an update, `[batch, kvHeads, seqLength, headDim]` each. */
export interface KvPair {
  readonly key: KvTensor;
  readonly value: KvTensor;
}

/**
 * What `update` is about to return, already computed by the caller: `[batch, kvHeads, seqLength,
 * headDim]` keys and values, the history the layer would return followed by the new rows. An ONNX
 * decoder's present outputs are exactly this (the graph concatenates the past it was fed with the new
 * rows, spec §1.3), so a layer can adopt them instead of copying its whole history every step. The
 * layer checks the first and the new rows of every slab and refuses anything else; it never writes
 * into these arrays.
 */
export interface KvConcatenation {
  readonly key: Float32Array;
  readonly value: Float32Array;
}

/**
 * One decoder layer's KV cache (STYLE.md §7: update, seqLength, stats, dispose).
 *
 * The tensors `update` returns may be views of the layer's own buffers: they hold exactly what
 * transformers returns, and stay valid until the layer's next `update` or `dispose`. Copy them to keep them longer.
 */
export interface CacheLayer {
  /** `write-once`: a serving runtime's format (write-once-layer.ts, a kvscope extension) */
  readonly kind: 'quantized' | 'dynamic' | 'write-once';
  /** `concatenated`: see KvConcatenation; the result is the same with or without it, only cheaper */
  update(key: KvTensor, value: KvTensor, concatenated?: KvConcatenation): KvPair;
  /** tokens seen so far (`get_seq_length()`) */
  seqLength(): number;
  memory(): LayerMemory;
  /** every quantize call so far, in order; empty for a dynamic layer */
  readonly events: readonly QuantizeEvent[];
  readonly flushCount: number;
  readonly disposed: boolean;
  /**
   * Whether the layer still reads `buffer` (a KvConcatenation it adopted, or one of its own). A caller
   * that adopted-out its arrays asks this before freeing one (app/engine/output-release.ts).
   */
  references(buffer: ArrayBufferLike): boolean;
  /** Releases the buffers; later calls to `update` throw. Idempotent. */
  dispose(): void;
}
