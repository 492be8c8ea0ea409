import type { LayerMemory } from '../cache/layer-memory.js';
import type { SessionOutputs } from './decoder-session.js';
import type { LayerQuantizeError } from './generation-result.js';
import type { HostTensor } from './host-tensor.js';
import type { FlushMetrics } from './types.js';

/** What reading one run's outputs into a lane did. */
export interface AbsorbResult {
  /** the quantize events (prefill, flushes) of this step, by layer */
  readonly flushes: readonly FlushMetrics[];
  /** of the absorb time, the part spent dequantizing stores for the next step's feeds */
  readonly dequantizeMs: number;
}

/**
 * One way of keeping a model's cache between runs: the pass-through lane (present fed back as past,
 * transformers' DynamicCache) or the KvCache lane (QuantizedCache semantics). The generation loop
 * and the reference lane only see this.
 */
export interface KvLane {
  /** tokens in the cache */
  readonly seqLength: number;
  /** adds the past KV (and hybrid state) inputs of the next run; returns the KV bytes materialized for it */
  addFeeds(feeds: Record<string, HostTensor>): number;
  /** reads a run's present outputs, `newTokens` positions long, into the cache */
  absorb(outputs: SessionOutputs, newTokens: number): AbsorbResult;
  /** per decoder layer: stored bytes by component; null where the layer keeps no KV cache */
  memory(): (LayerMemory | null)[];
  /** per decoder layer: flushes so far; null where the layer keeps no KV cache */
  flushCounts(): (number | null)[];
  /** per decoder layer: the last quantize event's K/V error; null where nothing was quantized */
  lastErrors(): (LayerQuantizeError | null)[];
  /**
   * Whether the lane still reads `buffer` (a past it will feed, state, or what its cache adopted): the
   * generation loop frees every session output no lane references (output-release.ts).
   */
  references(buffer: ArrayBufferLike): boolean;
  dispose(): void;
}
