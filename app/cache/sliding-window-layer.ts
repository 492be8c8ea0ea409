import type { KvTensor } from '../tensor/kv-tensor.js';
import type { CacheLayer, KvConcatenation, KvPair } from './cache-layer.js';
import { DynamicLayer } from './dynamic-layer.js';
import type { LayerMemory } from './layer-memory.js';
import type { QuantizeEvent } from './quantize-event.js';

/** The layer types transformers' DynamicCache gives a `DynamicSlidingWindowLayer`. */
const SLIDING_KINDS: ReadonlySet<string> = new Set(['sliding_attention', 'chunked_attention']);

/** What the window comes from: config.json's `sliding_window`, else `attention_chunk_size`. */
export interface WindowGeometry {
  readonly slidingWindow: number | null;
  readonly attentionChunkSize: number | null;
}

/**
 * Each layer's window when a full-precision cache of it is a `DynamicSlidingWindowLayer` in
 * transformers, else null. transformers' DynamicCache (V4.56+, and V5's DYNAMIC_LAYER_TYPE_MAPPING)
 * builds one for every `sliding_attention` and `chunked_attention` layer, with
 * `sliding_window = config.sliding_window or config.attention_chunk_size` for both.
 */
export function slidingWindows(kinds: readonly string[], geometry: WindowGeometry): (number | null)[] {
  const window = geometry.slidingWindow ?? geometry.attentionChunkSize;
  return kinds.map((kind) => (window !== null && window > 0 && SLIDING_KINDS.has(kind) ? window : null));
}

/**
 * A full-precision layer's memory as transformers' `DynamicSlidingWindowLayer` holds it: after each
 * update it keeps only the last `sliding_window - 1` tokens (`full_key_states[:, :, -self.sliding_window + 1:, :]`,
 * and returns the full states to attention for that one call). An ONNX graph, though, takes one past
 * length for every layer (one `past_sequence_length`, one attention mask over all positions) and
 * masks beyond the window itself, so kvscope must feed, and keep, the whole history: the result names
 * both, what transformers keeps (the stored bytes) and what the graph is fed (`fedTokens`, `fedBytes`),
 * while `workingBytes` stays what kvscope really holds.
 */
export function slidingWindowMemory(full: LayerMemory, window: number): LayerMemory {
  const seen = full.tokens;
  const kept = Math.min(seen, Math.max(0, window - 1));
  if (seen === 0) return { ...full, windowTokens: window };
  // Every per-token figure is an exact multiple of the tokens held (B·H·(D_k + D_v) values each).
  const valuesPerToken = full.valueCount / seen;
  const bytesPerToken = full.fullPrecisionBytes / seen;
  const valueCount = valuesPerToken * kept;
  const bytes = bytesPerToken * kept;
  return {
    tokens: kept,
    quantizedTokens: 0,
    fullPrecisionTokens: kept,
    valueCount,
    codeBytes: 0,
    metadataBytes: 0,
    fullPrecisionBytes: bytes,
    totalBytes: bytes,
    fp16BaselineBytes: valueCount * 2,
    fp32BaselineBytes: valueCount * 4,
    workingBytes: full.workingBytes,
    windowTokens: window,
    fedTokens: seen,
    fedBytes: full.fullPrecisionBytes,
  };
}

/**
 * A sliding-window layer kept in full precision: the history a `DynamicLayer` keeps (the graph is
 * fed all of it), reported as transformers' `DynamicSlidingWindowLayer` would store it
 * (slidingWindowMemory). `update` returns what the graph attends to, the whole history; `seqLength`
 * is `cumulative_length`, as transformers' `get_seq_length` for this layer.
 */
export class SlidingWindowLayer implements CacheLayer {
  readonly kind = 'dynamic';
  readonly #history = new DynamicLayer();

  constructor(readonly window: number) {}

  get events(): readonly QuantizeEvent[] {
    return this.#history.events;
  }

  get flushCount(): number {
    return 0;
  }

  get disposed(): boolean {
    return this.#history.disposed;
  }

  update(key: KvTensor, value: KvTensor, concatenated?: KvConcatenation): KvPair {
    return this.#history.update(key, value, concatenated);
  }

  seqLength(): number {
    return this.#history.seqLength();
  }

  memory(): LayerMemory {
    return slidingWindowMemory(this.#history.memory(), this.window);
  }

  references(buffer: ArrayBufferLike): boolean {
    return this.#history.references(buffer);
  }

  dispose(): void {
    this.#history.dispose();
  }
}
