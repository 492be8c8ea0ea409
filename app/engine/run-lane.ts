import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { ModelConfig } from '../config/model-config.js';
import { CacheKvLane } from './cache-kv-lane.js';
import type { DecoderIo } from './decoder-io.js';
import { PassThroughKvLane, type PassThroughLaneOptions } from './dynamic-kv-lane.js';
import type { KvDims } from './kv-present.js';
import type { KvLane } from './kv-lane.js';
import type { RunCachePlan } from './plan-run-cache.js';
import { slidingWindows } from '../cache/sliding-window-layer.js';

/**
 * The lane a run's cache plan asks for: the pass-through lane (DynamicCache) without a plan, else the
 * KvCache lane. generate() and the lab's evaluation build their lanes here, so both get the same cache.
 */
export function createRunLane(io: DecoderIo, config: ModelConfig, quantization: QuantizedCacheSettings, cachePlan: RunCachePlan, now: () => number): KvLane {
  const laneOptions = passThroughLaneOptions(io, config);
  if (cachePlan.plan === null) return new PassThroughKvLane(laneOptions);
  return new CacheKvLane({
    ...laneOptions, plan: cachePlan.plan, settings: quantization, now,
    ...(laneOptions.slidingWindows === undefined ? {} : { slidingWindows: laneOptions.slidingWindows }),
    ...(cachePlan.quantizer === undefined ? {} : { quantizer: cachePlan.quantizer }),
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
