import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { ModelConfig } from '../config/model-config.js';
import type { InGraphKvIo } from '../onnx/rewrite/in-graph-spec.js';
import { CacheKvLane } from './cache-kv-lane.js';
import type { DecoderIo } from './decoder-io.js';
import { PassThroughKvLane, type PassThroughLaneOptions } from './dynamic-kv-lane.js';
import { GenerationError } from './engine-errors.js';
import { GraphKvLane } from './graph-kv-lane.js';
import type { KvDims } from './kv-present.js';
import type { KvLane } from './kv-lane.js';
import type { RunCachePlan } from './plan-run-cache.js';
import { slidingWindows } from '../cache/sliding-window-layer.js';

/**
 * What a lane on the in-graph dequantization path (`--dequantize graph`) needs beside the source
 * graph's I/O: the rewritten graph's stored-cache inputs and new-rows outputs (app/onnx/rewrite/).
 */
export interface InGraphLaneOptions {
  readonly kv: InGraphKvIo;
  /** frees an ArrayBuffer nothing reads any more, now (Node: app/node/free-array-buffer.ts); optional */
  readonly releaseBuffer?: (buffer: ArrayBufferLike) => void;
}

/**
 * The lane a run's cache plan asks for: the pass-through lane (DynamicCache) without a plan, else the
 * KvCache lane: dequantized on the host (CacheKvLane), or, given `inGraph`, the stores fed to a
 * rewritten graph that dequantizes them itself (GraphKvLane). generate() and the lab's evaluation
 * build their lanes here, so both get the same cache.
 */
export function createRunLane(
  io: DecoderIo, config: ModelConfig, quantization: QuantizedCacheSettings, cachePlan: RunCachePlan, now: () => number, inGraph?: InGraphLaneOptions,
): KvLane {
  const laneOptions = passThroughLaneOptions(io, config);
  if (cachePlan.plan === null) {
    if (inGraph !== undefined) throw new GenerationError('the in-graph dequantization path runs quantized caches only.', 'Run a dynamic cache on the source graph.');
    return new PassThroughKvLane(laneOptions);
  }
  if (inGraph !== undefined) {
    return new GraphKvLane({
      ...laneOptions, kv: inGraph.kv, plan: cachePlan.plan, settings: quantization, quantizer: cachePlan.quantizer,
      ...(inGraph.releaseBuffer === undefined ? {} : { releaseBuffer: inGraph.releaseBuffer }),
    });
  }
  return new CacheKvLane({
    ...laneOptions, plan: cachePlan.plan, settings: quantization, now,
    ...(laneOptions.slidingWindows === undefined ? {} : { slidingWindows: laneOptions.slidingWindows }),
    ...(cachePlan.quantizer === undefined ? {} : { quantizer: cachePlan.quantizer }),
  });
}

/**
 * The reference replay's lane (spec §1.3's DynamicCache): the pass-through lane on the source graph;
 * on the in-graph path, the rewritten graph's lane with every row kept in full precision (never
 * quantized: an empty store and the whole history as residual), which feeds attention the exact
 * history the source graph would get, so the reference needs no second session, and no second
 * copy of the weights (issue 23, point 1).
 */
export function createReferenceLane(
  io: DecoderIo, config: ModelConfig, quantization: QuantizedCacheSettings, cachePlan: RunCachePlan, inGraph?: InGraphLaneOptions,
): KvLane {
  const laneOptions = passThroughLaneOptions(io, config);
  if (inGraph === undefined || cachePlan.plan === null) return new PassThroughKvLane(laneOptions);
  return new GraphKvLane({
    ...laneOptions, kv: inGraph.kv, plan: cachePlan.plan, settings: quantization, quantizer: cachePlan.quantizer, keepFullPrecision: true,
    ...(inGraph.releaseBuffer === undefined ? {} : { releaseBuffer: inGraph.releaseBuffer }),
  });
}

/**
 * The pass-through lane's options for this graph (the reference lane's too), with each layer's
 * sliding window (transformers' DynamicSlidingWindowLayer, for the memory they count).
 */
export function passThroughLaneOptions(io: DecoderIo, config: ModelConfig): PassThroughLaneOptions & { readonly slidingWindows: readonly (number | null)[] } {
  return { io, numLayers: config.geometry.numLayers, dims: kvDims(io, config), slidingWindows: slidingWindows(config.layers.actualKinds, config.geometry) };
}

/** Each KV layer's `[kvHeads, headDim]` for keys and values: the graph's declared dims, else config.json's. */
export function kvDims(io: DecoderIo, config: ModelConfig): Map<number, { key: KvDims; value: KvDims }> {
  const { numKeyValueHeads, headDim } = config.geometry;
  const pick = (dim: number | string | undefined, fallback: number): number => (typeof dim === 'number' ? dim : fallback);
  return new Map(io.kvLayers.map((layer) => [layer.layer, {
    key: { kvHeads: pick(layer.keyShape[1], numKeyValueHeads), headDim: pick(layer.keyShape[3], headDim) },
    value: { kvHeads: pick(layer.valueShape[1], numKeyValueHeads), headDim: pick(layer.valueShape[3], headDim) },
  }]));
}
