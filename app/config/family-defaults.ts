import { modelTypeOf, type ConfigObject } from './config-object.js';

/**
 * transformers' class defaults, per `model_type`, for the attributes kvscope reads (spec §2.4 "config
 * keys" column). They matter because `save_pretrained` drops values equal to the class default, most
 * visibly inside nested sub-configs: gemma-3-4b-it's `text_config` lists neither heads nor head_dim.
 * A key that is present, even as JSON null, is never replaced: `"sliding_window": null` means full
 * attention, while an absent `sliding_window` on Mistral means the class default 4096 (spec §2.4).
 */
const FAMILY_DEFAULTS: Readonly<Record<string, ConfigObject>> = {
  mistral: { sliding_window: 4096 },
  gemma2: { sliding_window: 4096 },
  // Gemma3TextConfig's defaults are the 2B-class geometry; sliding_window_pattern is a BC kwarg read
  // with `kwargs.get("sliding_window_pattern", 6)`.
  gemma3_text: {
    sliding_window: 4096, sliding_window_pattern: 6, num_hidden_layers: 26, num_attention_heads: 8,
    num_key_value_heads: 4, head_dim: 256, hidden_size: 2304, vocab_size: 262208,
  },
  gemma3n_text: { sliding_window: 512, num_kv_shared_layers: 15 },
  cohere2: { sliding_window: 4096, sliding_window_pattern: 4 },
  qwen2: { use_sliding_window: false, sliding_window: 4096, max_window_layers: 28 },
  qwen3: { use_sliding_window: false, sliding_window: 4096, max_window_layers: 28 },
  gpt_oss: { sliding_window: 128 },
  llama4_text: { attention_chunk_size: 8192, no_rope_layer_interval: 4 },
  olmo3: { sliding_window: 4096 },
  exaone4: { sliding_window: 4096, sliding_window_pattern: 4 },
  qwen3_next: { full_attention_interval: 4 },
  jamba: { attn_layer_period: 8, attn_layer_offset: 4 },
  zamba: { attn_layer_period: 6, attn_layer_offset: 4 },
  phi3: { sliding_window: null },
  starcoder2: { sliding_window: null },
};

export interface DefaultedConfig {
  readonly config: ConfigObject;
  /** the keys filled in from the class defaults, in table order */
  readonly defaulted: readonly string[];
}

export function withFamilyDefaults(config: ConfigObject): DefaultedConfig {
  const modelType = modelTypeOf(config);
  const defaults = modelType !== undefined ? FAMILY_DEFAULTS[modelType] : undefined;
  if (defaults === undefined) return { config, defaulted: [] };
  const missing = Object.keys(defaults).filter((key) => !Object.hasOwn(config, key));
  if (missing.length === 0) return { config, defaulted: [] };
  const filled: Record<string, unknown> = { ...config };
  for (const key of missing) filled[key] = defaults[key];
  return { config: filled, defaulted: missing };
}

/**
 * The text model type of multimodal wrappers whose `text_config` may omit `model_type`
 * (transformers then builds the wrapper's declared sub-config class).
 */
const WRAPPER_TEXT_MODEL_TYPES: Readonly<Record<string, string>> = {
  gemma3: 'gemma3_text',
  gemma3n: 'gemma3n_text',
  llama4: 'llama4_text',
};

export function textModelTypeForWrapper(wrapperModelType: string | undefined): string | undefined {
  return wrapperModelType !== undefined ? WRAPPER_TEXT_MODEL_TYPES[wrapperModelType] : undefined;
}
