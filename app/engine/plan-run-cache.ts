import type { CacheLayerPlan } from '../cache/layer-plan.js';
import { planCacheLayers } from '../cache/layer-plan.js';
import type { ModelConfig } from '../config/model-config.js';
import type { QuantBackend, Quantizer } from '../quant/types.js';
import { quantizerFor } from '../quant/registry.js';
import { runPreflight, type PreflightResult } from '../preflight/run-preflight.js';
import { PreflightRefusedError } from './engine-errors.js';
import type { RunSettings } from './types.js';

export interface RunCachePlan {
  /** one entry per decoder layer; null in dynamic mode (the pass-through lane needs no plan) */
  readonly plan: readonly CacheLayerPlan[] | null;
  /** the quantized mode's preflight (warnings and notes travel with the result) */
  readonly preflight: PreflightResult | null;
  readonly quantizer: Quantizer | undefined;
}

/**
 * The cache a run gets. Quantized mode first runs the preflight on the real prompt length and refuses
 * exactly when it refuses (its first error is the one transformers would raise, spec §1.2); then the
 * layer policy places each decoder layer (app/cache/layer-plan.ts, the plan the preflight reported).
 */
export function planRunCache(config: ModelConfig, settings: RunSettings, promptLength: number): RunCachePlan {
  if (settings.cacheMode === 'dynamic') return { plan: null, preflight: null, quantizer: undefined };
  const preflight = runPreflight(config, settings.quantization, { sequenceLengths: [promptLength] });
  if (!preflight.ok) throw new PreflightRefusedError(preflight.diagnostics);
  const plan = planCacheLayers(config.layers.layers, settings.quantization.layerPolicy, settings.quantization);
  return { plan, preflight, quantizer: quantizerFor(settings.quantization.backend as QuantBackend) };
}
