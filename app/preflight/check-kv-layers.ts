import type { LayerPolicy } from '../cache/cache-config.js';
import { FULL_ATTENTION } from '../config/layer-kinds.js';
import type { ModelConfig } from '../config/model-config.js';
import type { Diagnostic } from './diagnostic.js';
import { describeKinds, formatLayerList } from './layer-list.js';

/**
 * What transformers' type check misses (spec §2.4, §2.5): Jamba and Bamba expose no `layer_types`,
 * so every layer passes as full_attention, yet their mamba layers have no KV cache. A quantized
 * layer is built for each, and the first forward fails at the first mamba layer.
 */
export function checkLayersWithoutKvCache(config: ModelConfig, policy: LayerPolicy): Diagnostic[] {
  if (policy !== 'all') return [];
  const missed = config.layers.layers.filter((layer, index) =>
    config.layers.layerTypes[index] === FULL_ATTENTION && !layer.hasKvCache && !layer.sharesKv);
  if (missed.length === 0) return [];
  const attention = config.layers.layers.filter((layer) => layer.hasKvCache).map((layer) => layer.index);
  return [{
    code: 'layers-without-kv-cache',
    severity: 'error',
    origin: 'kvscope',
    message:
      `transformers accepts this ${config.modelType ?? 'model'} config because its derived layer types are all full_attention, ` +
      `but ${describeKinds(missed.map((layer) => ({ index: layer.index, kind: layer.actualKind })))} keep no KV cache. ` +
      `QuantizedCache builds a quantized layer for each, and a forward pass fails at layer ${missed[0]?.index ?? 0}; ` +
      'generate() probably refuses the model earlier (unverified for V5).',
    layers: missed.map((layer) => layer.index),
    fix: attention.length > 0
      ? `Use layer policy "full-attention-only" to quantize only the attention layers (${formatLayerList(attention)}).`
      : 'This model has no attention layer: use its own state cache, unquantized.',
  }];
}
