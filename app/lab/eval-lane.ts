import type { ModelConfig } from '../config/model-config.js';
import type { DecoderIo } from '../engine/decoder-io.js';
import type { KvLane } from '../engine/kv-lane.js';
import type { RunCachePlan } from '../engine/plan-run-cache.js';
import { createRunLane, type InGraphLaneOptions } from '../engine/run-lane.js';
import { EvalInputError } from './lab-errors.js';
import type { EvalSettings } from './eval-settings.js';
import { isAllTargets } from './lab-targets.js';
import { TargetedKvLane } from './targeted-kv-lane.js';

/**
 * The lane an evaluation scores: a run's own lane (createRunLane, what `kvscope run` gets), or, for
 * the lab's sensitivity targets (a kvscope extension), the lane that quantizes only the chosen
 * layers and sides. At transformers' targets (every layer, keys and values) it is the run's lane itself.
 * `inGraph`: the session runs the in-graph dequantization rewrite (`--dequantize graph`), whose lane
 * is the run's GraphKvLane; the targets are host-only (the rewrite quantizes every planned layer).
 */
export function createEvalLane(
  io: DecoderIo, config: ModelConfig, settings: EvalSettings, cachePlan: RunCachePlan, now: () => number, inGraph?: InGraphLaneOptions,
): KvLane {
  if (settings.cacheMode === 'dynamic' || isAllTargets(settings.targets)) return createRunLane(io, config, settings.quantization, cachePlan, now, inGraph);
  if (inGraph !== undefined) throw new EvalInputError(IN_GRAPH_TARGETS_REASON);
  return new TargetedKvLane({ io, config, quantization: settings.quantization, cachePlan, targets: settings.targets!, now });
}

/** Which sides of `layer` the evaluation quantizes (for its error statistics). */
export function quantizedSides(settings: EvalSettings, layer: number): { key: boolean; value: boolean } {
  if (settings.cacheMode === 'dynamic') return { key: false, value: false };
  const targets = settings.targets;
  if (targets === undefined || isAllTargets(targets)) return { key: true, value: true };
  const inLayer = targets.layers === null || targets.layers.includes(layer);
  return { key: inLayer && targets.parts !== 'value', value: inLayer && targets.parts !== 'key' };
}

/** Why an evaluation with the lab's targets runs on the host. */
export const IN_GRAPH_TARGETS_REASON = 'the lab\'s --quantize-layers/--quantize-parts targets are not rewritten into the graph (it quantizes every layer the cache plan quantizes)';
