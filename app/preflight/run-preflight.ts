import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { ModelConfig } from '../config/model-config.js';
import { layerUsesRuntimeFormat, usesRuntimeFormat } from '../cache/cache-extensions.js';
import { backendRules } from '../quant/backend-rules.js';
import { checkAxisRecommendation, checkSlidingWindowCoversContext, configNotes } from './check-advice.js';
import { checkBackend } from './check-backend.js';
import { checkBackendArguments } from './check-backend-arguments.js';
import { checkCacheArguments } from './check-cache-arguments.js';
import { bitsGroups, checkExtensions } from './check-extensions.js';
import { checkHqqLimits } from './check-hqq-limits.js';
import { checkLayersWithoutKvCache } from './check-kv-layers.js';
import { checkLayerTypes } from './check-layer-types.js';
import { checkOptions, type PreflightOptions } from './check-options.js';
import { checkQuantizeShapes } from './check-quantize-shapes.js';
import { sortBySeverity, type Diagnostic } from './diagnostic.js';
import { planPreflightLayers, type PreflightLayer } from './preflight-layer.js';

export type { PreflightOptions } from './check-options.js';

export interface PreflightResult {
  /** no diagnostic of severity 'error' */
  readonly ok: boolean;
  /** transformers' derived list, the one QuantizedCache validates (spec §2.2) */
  readonly layerTypes: string[];
  readonly layers: PreflightLayer[];
  /** errors first, then warnings, then info; each group in check order (see below) */
  readonly diagnostics: Diagnostic[];
}

/**
 * Everything that would stop, or quietly change, a quantized-cache run of this model, before any
 * tensor exists. transformers' checks come in its order (spec §1.2): backend → layer types → nbits →
 * axis_key → axis_value. transformers raises only the first; kvscope lists them all, so the first
 * error here is the one transformers would raise. Then what transformers misses: layers without a
 * KV cache, group size and residual length, the backends' shape constraints at prefill and at each
 * flush (spec §1.3, §3.1, §3.2), and advice.
 */
export function runPreflight(config: ModelConfig, settings: QuantizedCacheSettings, options: PreflightOptions = {}): PreflightResult {
  const layers = planPreflightLayers(config, settings.layerPolicy, settings);
  const quantizedLayers = layers.filter((layer) => layer.quantized).map((layer) => layer.index);
  // A runtime's write-once format (--kv-format, or a layer map's format_key/format_value: kvscope
  // extensions) replaces the backend's store in its layers, so the backend's shape rules apply to the
  // other layers only; the format's own refusals come from checkExtensions.
  const backendLayers = quantizedLayers.filter((layer) => !layerUsesRuntimeFormat(settings, layer));
  const rules = backendLayers.length === 0 && usesRuntimeFormat(settings) ? null : backendRules(String(settings.backend));
  const checked = checkOptions(options);
  // transformers' path: one group, every quantized layer at nbits; kvscope's K/V bits and layer maps may make more.
  const groups = bitsGroups(settings, backendLayers, config.geometry.numLayers);
  const sinkTokens = settings.extensions?.sinkTokens ?? 0;

  const diagnostics: Diagnostic[] = [
    ...checkBackend(settings),
    ...checkLayerTypes(config, settings.layerPolicy, layers),
    ...(rules !== null ? checkBackendArguments(rules, settings, backendLayers) : []),
    ...checkExtensions(config, settings, quantizedLayers),
    ...checkLayersWithoutKvCache(config, settings.layerPolicy),
    ...checkCacheArguments(settings, quantizedLayers),
    ...checked.diagnostics,
    ...(rules !== null ? groups.flatMap((group) => checkHqqLimits(rules, settings, checked.batch * config.geometry.numKeyValueHeads, group.layers, group.bits)) : []),
    ...(rules !== null
      ? groups.flatMap((group) => checkQuantizeShapes({
        rules, settings, geometry: config.geometry, batch: checked.batch, sequenceLengths: checked.sequenceLengths,
        quantizedLayers: group.layers, bits: group.bits, sinkTokens,
      }))
      : []),
    ...(rules !== null ? checkAxisRecommendation(rules, settings, backendLayers) : []),
    ...checkSlidingWindowCoversContext(config),
    ...configNotes(config),
  ];
  const sorted = sortBySeverity(diagnostics);
  return {
    ok: !sorted.some((diagnostic) => diagnostic.severity === 'error'),
    layerTypes: [...config.layers.layerTypes],
    layers,
    diagnostics: sorted,
  };
}
