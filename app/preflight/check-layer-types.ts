import type { LayerPolicy } from '../cache/cache-config.js';
import { FULL_ATTENTION } from '../config/layer-kinds.js';
import type { ModelConfig } from '../config/model-config.js';
import { withExplanation } from '../config/verbatim-message.js';
import type { Diagnostic } from './diagnostic.js';
import { describeKinds, formatLayerList } from './layer-list.js';
import type { PreflightLayer } from './preflight-layer.js';
import { onlyFullAttentionMessage } from './transformers-messages.js';

/**
 * `QuantizedCache.__init__` steps 2–4 (spec §1.2): refuse any derived type other than full_attention.
 * Under kvscope's `full-attention-only` policy the refusal becomes a report of what stays unquantized.
 */
export function checkLayerTypes(config: ModelConfig, policy: LayerPolicy, layers: readonly PreflightLayer[]): Diagnostic[] {
  return policy === 'all' ? checkAllPolicy(config) : checkFullAttentionOnly(layers);
}

function checkAllPolicy(config: ModelConfig): Diagnostic[] {
  const layerTypes = config.layers.layerTypes;
  const invalid = [...new Set(layerTypes)].filter((type) => type !== FULL_ATTENTION).sort();
  if (invalid.length === 0) return [];

  const offending = layerTypes.flatMap((type, index) => (type !== FULL_ATTENTION ? [{ index, kind: type }] : []));
  const full = layerTypes.flatMap((type, index) => (type === FULL_ATTENTION ? [index] : []));
  const hashOrder = invalid.length > 1
    ? ' Python prints this set in hash order, which changes with PYTHONHASHSEED; kvscope sorts it.'
    : '';
  const explanation =
    `kvscope: ${config.layers.rule}. Invalid: ${describeKinds(offending)}; ` +
    `full_attention: ${full.length > 0 ? formatLayerList(full) : 'none'}. ` +
    'QuantizedCache raises this before it builds any layer, so its nbits and axis checks never run.' + hashOrder;
  return [{
    code: 'unsupported-layer-types',
    severity: 'error',
    origin: 'transformers',
    message: withExplanation(onlyFullAttentionMessage(invalid), explanation),
    layers: offending.map((entry) => entry.index),
    fix: full.length > 0
      ? `Use layer policy "full-attention-only" to quantize only the full-attention layers (${formatLayerList(full)}) and keep the others in full precision, or use an unquantized dynamic cache.`
      : 'This model has no full-attention layer to quantize: use an unquantized dynamic cache.',
  }];
}

function checkFullAttentionOnly(layers: readonly PreflightLayer[]): Diagnostic[] {
  const quantized = layers.filter((layer) => layer.quantized).map((layer) => layer.index);
  const kept = layers.filter((layer) => !layer.quantized && layer.hasKvCache);
  const noCache = layers.filter((layer) => !layer.hasKvCache && !layer.sharesKv);
  const shared = layers.filter((layer) => layer.sharesKv).map((layer) => layer.index);
  const parts = [
    kept.length > 0 ? `kept in full precision (dynamic cache): ${describeKinds(kept.map((l) => ({ index: l.index, kind: l.actualKind })))}` : '',
    noCache.length > 0 ? `no KV cache at all: ${describeKinds(noCache.map((l) => ({ index: l.index, kind: l.actualKind })))}` : '',
    shared.length > 0 ? `reading an earlier layer's KV cache (num_kv_shared_layers): ${formatLayerList(shared)}` : '',
  ].filter((part) => part !== '');

  if (quantized.length === 0) {
    return [{
      code: 'no-quantizable-layers',
      severity: 'error',
      origin: 'kvscope',
      message: `Layer policy "full-attention-only" finds no full-attention layer with a KV cache of its own, so nothing would be quantized. Layers: ${parts.join('; ')}.`,
      layers: layers.map((layer) => layer.index),
      fix: 'Use an unquantized dynamic cache for this model.',
    }];
  }
  if (parts.length === 0) return [];
  return [{
    code: 'layers-kept-full-precision',
    severity: 'info',
    origin: 'kvscope',
    message:
      `Layer policy "full-attention-only" quantizes ${quantized.length} of ${layers.length} layers (${formatLayerList(quantized)}); ` +
      `${parts.join('; ')}. transformers' QuantizedCache would refuse this model; kvscope's policy is an extension.`,
    layers: layers.filter((layer) => !layer.quantized).map((layer) => layer.index),
  }];
}
