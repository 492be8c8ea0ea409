import { modelTypeOf, type ConfigObject } from './config-object.js';

/**
 * `PreTrainedConfig.attribute_map` per `model_type`: `getattr(config, key)` and `setattr` are routed
 * to the mapped name. Only maps that change what kvscope reads are listed: the hybrid families whose
 * layer types live under another name (spec §2.2 "Key facts", §2.4) and the common families whose
 * layer count and head count have other names (so the legacy encoder-decoder renaming of spec §2.1
 * step 6 lands where transformers puts it).
 */
const ATTRIBUTE_MAPS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  falcon_h1: { layer_types: 'layers_block_type' },
  nemotron_h: { layer_types: 'layers_block_type' },
  granitemoehybrid: { layers_block_type: 'layer_types' },
  gpt2: { hidden_size: 'n_embd', max_position_embeddings: 'n_positions', num_attention_heads: 'n_head', num_hidden_layers: 'n_layer' },
  t5: { hidden_size: 'd_model', num_attention_heads: 'num_heads', num_hidden_layers: 'num_layers' },
  bart: { num_attention_heads: 'encoder_attention_heads', hidden_size: 'd_model' },
};

export function attributeMapOf(config: ConfigObject): Readonly<Record<string, string>> {
  const modelType = modelTypeOf(config);
  return (modelType !== undefined ? ATTRIBUTE_MAPS[modelType] : undefined) ?? {};
}

/** The key under which `setattr(config, name, …)` stores a value. */
export function storedName(config: ConfigObject, name: string): string {
  return attributeMapOf(config)[name] ?? name;
}

/**
 * `getattr(config, name, None)` on the loaded config: the value stored under the mapped name. A
 * config.json may spell that attribute by its alias (transformers routes the alias to the stored
 * name while loading), so an alias key counts too. Absent → undefined; JSON null stays null.
 */
export function getAttribute(config: ConfigObject, name: string): unknown {
  const stored = storedName(config, name);
  if (Object.hasOwn(config, stored)) return config[stored];
  for (const [alias, target] of Object.entries(attributeMapOf(config))) {
    if (target === stored && Object.hasOwn(config, alias)) return config[alias];
  }
  return undefined;
}
