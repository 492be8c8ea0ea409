import { ConfigError } from '../errors.js';
import { optionalInteger, requiredPositiveInteger } from './config-fields.js';
import { modelTypeOf, type ConfigObject } from './config-object.js';
import type { LayerTypeDerivation } from './layer-types.js';

/**
 * The model's KV geometry: every cached K or V tensor is `[batch, numKeyValueHeads, seq, headDim]`
 * (spec §1.3). The quantizers' grouping constraints (spec §3.1, §3.2) are arithmetic on these numbers.
 */
export interface ModelKvGeometry {
  readonly numLayers: number;
  readonly numAttentionHeads: number;
  /** `num_key_value_heads`, defaulting to num_attention_heads (no GQA) */
  readonly numKeyValueHeads: number;
  /** `head_dim`, defaulting to `hidden_size // num_attention_heads` */
  readonly headDim: number;
  readonly hiddenSize: number | null;
  readonly vocabSize: number | null;
  readonly maxPositionEmbeddings: number | null;
  readonly slidingWindow: number | null;
  readonly attentionChunkSize: number | null;
  /** layers with a KV cache of their own */
  readonly kvCacheLayers: readonly number[];
  /** the num_kv_shared_layers tail, which reads earlier layers' caches */
  readonly kvSharedLayers: readonly number[];
}

export function readKvGeometry(config: ConfigObject, layers: LayerTypeDerivation, where: string): ModelKvGeometry {
  const numAttentionHeads = requiredPositiveInteger(config, 'num_attention_heads', where,
    'Add "num_attention_heads": <query heads per layer> to config.json.');
  const numKeyValueHeads = optionalInteger(config, 'num_key_value_heads', where) ?? numAttentionHeads;
  if (numKeyValueHeads < 1) {
    throw new ConfigError(`${where}: \`num_key_value_heads\` should be at least 1 but is ${numKeyValueHeads}. Fix it in config.json.`);
  }
  const hiddenSize = optionalInteger(config, 'hidden_size', where);
  return {
    numLayers: layers.numLayers,
    numAttentionHeads,
    numKeyValueHeads,
    headDim: headDimOf(config, hiddenSize, numAttentionHeads, where),
    hiddenSize,
    vocabSize: optionalInteger(config, 'vocab_size', where),
    maxPositionEmbeddings: optionalInteger(config, 'max_position_embeddings', where),
    slidingWindow: layers.slidingWindow,
    attentionChunkSize: layers.attentionChunkSize,
    kvCacheLayers: layers.layers.filter((layer) => layer.hasKvCache).map((layer) => layer.index),
    kvSharedLayers: layers.layers.filter((layer) => layer.sharesKv).map((layer) => layer.index),
  };
}

/**
 * transformers' attention modules use `getattr(config, "head_dim", hidden_size // num_attention_heads)`.
 * Zamba's shared attention block works on the doubled width: `attention_head_dim`, by default
 * `2 * hidden_size // num_attention_heads` (ZambaConfig).
 */
function headDimOf(config: ConfigObject, hiddenSize: number | null, numAttentionHeads: number, where: string): number {
  const zamba = modelTypeOf(config) === 'zamba';
  const headDim = optionalInteger(config, zamba ? 'attention_head_dim' : 'head_dim', where);
  if (headDim !== null) {
    if (headDim < 1) throw new ConfigError(`${where}: \`head_dim\` should be at least 1 but is ${headDim}. Fix it in config.json.`);
    return headDim;
  }
  if (hiddenSize === null) {
    throw new ConfigError(
      `${where} has neither \`head_dim\` nor \`hidden_size\`, so the KV head size is unknown (transformers uses ` +
      'hidden_size // num_attention_heads). Add "head_dim": <size of one key vector> to config.json.',
    );
  }
  const derived = Math.floor(((zamba ? 2 : 1) * hiddenSize) / numAttentionHeads);
  if (derived < 1) {
    throw new ConfigError(`${where}: hidden_size ${hiddenSize} // num_attention_heads ${numAttentionHeads} is 0. Add "head_dim" to config.json.`);
  }
  return derived;
}
