import { isQuantizedSide, resolveLayerSides } from '../cache/cache-plan.js';
import type { ModelConfig } from '../config/model-config.js';
import type { DecoderIo } from '../engine/decoder-io.js';
import type { KvLane } from '../engine/kv-lane.js';
import type { RunCachePlan } from '../engine/plan-run-cache.js';
import { createRunLane, type InGraphLaneOptions } from '../engine/run-lane.js';
import { EvalInputError } from './lab-errors.js';
import type { EvalSettings } from './eval-settings.js';
import { isAllTargets, targetedQuantization } from './lab-targets.js';

/**
 * The lane an evaluation scores: a run's own lane (createRunLane, what `kvscope run` gets). The lab's
 * sensitivity targets (a kvscope extension) are part of the cache plan (`cachePlan`, planned from
 * targetedQuantization: full-precision layers are dynamic ones, a full-precision side is kept exactly
 * inside its quantized layer), so the same lane runs them. `inGraph`: the session runs the in-graph
 * dequantization rewrite (`--dequantize graph`), whose lane is the run's GraphKvLane; the targets are
 * host-only (the rewrite dequantizes both sides of every layer it quantizes).
 */
export function createEvalLane(
  io: DecoderIo, config: ModelConfig, settings: EvalSettings, cachePlan: RunCachePlan, now: () => number, inGraph?: InGraphLaneOptions,
): KvLane {
  if (settings.cacheMode === 'dynamic' || isAllTargets(settings.targets)) return createRunLane(io, config, settings.quantization, cachePlan, now, inGraph);
  if (inGraph !== undefined) throw new EvalInputError(IN_GRAPH_TARGETS_REASON);
  checkTargetsOnGraph(io, settings);
  return createRunLane(io, config, targetedQuantization(settings, config.geometry.numLayers), cachePlan, now);
}

/** The targets' layers against the model's (before the cache is planned: a layer out of range is a mistake, not a full-precision layer). */
export function checkTargetLayers(settings: EvalSettings, numLayers: number): void {
  if (settings.cacheMode === 'dynamic' || settings.targets?.layers === undefined || settings.targets.layers === null) return;
  for (const layer of settings.targets.layers) {
    if (!Number.isInteger(layer) || layer < 0 || layer >= numLayers) {
      throw new EvalInputError(`--quantize-layers names layer ${layer}, but the model has layers 0…${numLayers - 1}.`);
    }
  }
}

/** What the graph's KV inputs allow: a targeted layer keeps a KV input, and one side alone needs per-side inputs. */
function checkTargetsOnGraph(io: DecoderIo, settings: EvalSettings): void {
  const targets = settings.targets!;
  const chosen = targets.layers ?? io.kvLayers.map((layer) => layer.layer);
  for (const layer of chosen) {
    if (!io.kvLayers.some((kv) => kv.layer === layer)) {
      throw new EvalInputError(`--quantize-layers names layer ${layer}, which keeps no KV cache in this graph.`, 'Choose layers with past_key_values inputs.');
    }
  }
  const combined = io.kvLayers.find((kv) => chosen.includes(kv.layer) && kv.packing === 'combined');
  // One side alone would need the other side's exact rows joined into the same past_N tensor, and its
  // present split back: not built, so said here rather than fed both sides quantized.
  if (targets.parts !== 'both' && combined !== undefined) {
    throw new EvalInputError(
      `--quantize-parts ${targets.parts} cannot be evaluated on this graph: it packs keys and values of a layer in one tensor (${combined.pastKey}, GPT-2's combined past), which kvscope feeds whole.`,
      'Use --quantize-parts both (with --quantize-layers to choose layers), or a graph with per-layer past_key_values.N.key/value inputs.');
  }
}

/** Which sides of `layer` the evaluation quantizes (for its error statistics): the cache plan's. */
export function quantizedSides(settings: EvalSettings, layer: number, numLayers: number): { key: boolean; value: boolean } {
  if (settings.cacheMode === 'dynamic') return { key: false, value: false };
  if (isAllTargets(settings.targets)) return { key: true, value: true };
  const sides = resolveLayerSides(targetedQuantization(settings, numLayers), layer, numLayers);
  return sides === null ? { key: false, value: false } : { key: isQuantizedSide(sides.key), value: isQuantizedSide(sides.value) };
}

/** Why an evaluation with the lab's targets runs on the host. */
export const IN_GRAPH_TARGETS_REASON = 'the lab\'s --quantize-layers/--quantize-parts targets are not rewritten into the graph (it quantizes every layer the cache plan quantizes)';
