import { activeExtensions, EXTENSIONS_HEADING } from '../cache/active-extensions.js';
import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { checkedBits, layerBits } from '../cache/cache-extensions.js';
import { extensionProblems } from '../cache/extension-problems.js';
import type { ModelConfig } from '../config/model-config.js';
import type { Diagnostic } from './diagnostic.js';

/**
 * The kvscope extensions in the preflight: what app/cache/extension-problems.ts finds (the one
 * validation, shared with the cache) as diagnostics, and a note naming every active extension, so a
 * verdict never passes an extension off as transformers' behaviour.
 */
export function checkExtensions(config: ModelConfig, settings: QuantizedCacheSettings, quantizedLayers: number[]): Diagnostic[] {
  if (settings.extensions === undefined) return [];
  const g = config.geometry;
  const problems = extensionProblems(settings, { numLayers: g.numLayers, headDims: { key: g.headDim, value: g.headDim } });
  const diagnostics: Diagnostic[] = problems.map((problem) => ({
    code: problem.code, severity: problem.severity, origin: problem.origin, message: problem.message, layers: problem.layers, fix: problem.fix,
  }));
  const active = activeExtensions(settings, g.numLayers);
  if (active.length > 0) {
    diagnostics.push({
      code: 'kvscope-extensions',
      severity: 'info',
      origin: 'kvscope',
      message: `${EXTENSIONS_HEADING}, not transformers' QuantizedCache: ${active.map((item) => `${item.label} (${item.detail})`).join('; ')}.`,
      layers: quantizedLayers,
    });
  }
  return diagnostics;
}

/** Quantized layers grouped by their K and V bits: each group's shapes are checked with its own bits. */
export interface BitsGroup {
  readonly bits: { readonly key: number; readonly value: number };
  readonly layers: number[];
}

export function bitsGroups(settings: QuantizedCacheSettings, quantizedLayers: readonly number[], numLayers: number): BitsGroup[] {
  const groups = new Map<string, BitsGroup>();
  for (const layer of quantizedLayers) {
    const bits = layerBits(settings, layer, numLayers);
    if (bits === 'full-precision') continue;
    const checked = checkedBits(bits);
    const key = `${checked.key}/${checked.value}`;
    const group = groups.get(key) ?? { bits: checked, layers: [] };
    group.layers.push(layer);
    groups.set(key, group);
  }
  return [...groups.values()];
}
