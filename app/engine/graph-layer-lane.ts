import type { LayerMemory } from '../cache/layer-memory.js';
import type { KvRows } from '../cache/stored-parts.js';
import type { InGraphSideIo } from '../onnx/rewrite/in-graph-spec.js';
import type { LayerQuantizeError } from './generation-result.js';
import type { HostTensor } from './host-tensor.js';
import type { KvDims } from './kv-present.js';
import type { FlushMetrics } from './types.js';

/** This absorb's rows of one side's new-rows output, `[1, kvHeads, newTokens, headDim]` in the graph's dtype. */
export type NewRows = (io: InGraphSideIo, dims: KvDims, newTokens: number) => KvRows;

/**
 * One quantized layer on the graph path (GraphKvLane): what it stores crosses into the rewritten
 * graph, and it keeps the new rows the graph returns. transformers' store (graph-store-layer.ts) and
 * a runtime's write-once bytes (graph-format-layer.ts) are the two kinds, chosen per layer by the
 * cache plan.
 */
export interface GraphLayerLane {
  readonly layer: number;
  /** flushes so far (a write-once layer never flushes) */
  readonly flushCount: number;
  /** adds this layer's stored inputs; returns the bytes that cross into the graph */
  feed(feeds: Record<string, HostTensor>): number;
  /** keeps this absorb's new rows; pushes the quantize events they caused */
  absorb(rows: NewRows, newTokens: number, flushes: FlushMetrics[]): void;
  memory(): LayerMemory;
  /** the last quantize event's K/V error; null where there was none */
  lastError(): LayerQuantizeError | null;
  dispose(): void;
}
