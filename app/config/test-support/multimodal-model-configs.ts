import type { PublishedConfig } from './published-config.js';

/** Multimodal wrappers: `get_text_config(decoder=True)` returns their `text_config` (spec §2.1). */

/** Its text_config omits heads and head_dim, which equal Gemma3TextConfig's class defaults. */
export const GEMMA_3_4B_IT: PublishedConfig = {
  id: 'google/gemma-3-4b-it',
  provenance: 'published',
  config: {
    architectures: ['Gemma3ForConditionalGeneration'],
    boi_token_index: 255999,
    eoi_token_index: 256000,
    eos_token_id: [1, 106],
    image_token_index: 262144,
    initializer_range: 0.02,
    mm_tokens_per_image: 256,
    model_type: 'gemma3',
    text_config: {
      hidden_size: 2560,
      intermediate_size: 10240,
      model_type: 'gemma3_text',
      num_hidden_layers: 34,
      rope_scaling: { factor: 8.0, rope_type: 'linear' },
      sliding_window: 1024,
    },
    torch_dtype: 'bfloat16',
    transformers_version: '4.50.0.dev0',
    vision_config: {
      hidden_size: 1152,
      image_size: 896,
      intermediate_size: 4304,
      model_type: 'siglip_vision_model',
      num_attention_heads: 16,
      num_hidden_layers: 27,
      patch_size: 14,
      vision_use_head: false,
    },
  },
};

export const GEMMA_3N_E2B_IT: PublishedConfig = {
  id: 'google/gemma-3n-E2B-it',
  provenance: 'reconstructed',
  note: 'text_config fields as in public copies of the file; audio and vision configs trimmed',
  config: {
    architectures: ['Gemma3nForConditionalGeneration'],
    model_type: 'gemma3n',
    audio_config: { model_type: 'gemma3n_audio', hidden_size: 1536 },
    text_config: {
      model_type: 'gemma3n_text',
      head_dim: 256,
      hidden_size: 2048,
      hidden_size_per_layer_input: 256,
      intermediate_size: 8192,
      layer_types: [
          'sliding_attention', 'sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention',
          'sliding_attention', 'sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention',
          'sliding_attention', 'sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention',
          'sliding_attention', 'sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention',
          'sliding_attention', 'sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention',
          'sliding_attention', 'sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention',
        ],
      max_position_embeddings: 32768,
      num_attention_heads: 8,
      num_hidden_layers: 30,
      num_key_value_heads: 2,
      num_kv_shared_layers: 10,
      sliding_window: 512,
      vocab_size: 262400,
    },
    vision_config: { model_type: 'gemma3n_vision', hidden_size: 2048 },
  },
};

/** `no_rope_layers: []` is falsy in Python, so Llama4TextConfig derives the NoPE layers itself (spec §2.4). */
export const LLAMA_4_SCOUT: PublishedConfig = {
  id: 'meta-llama/Llama-4-Scout-17B-16E-Instruct',
  provenance: 'reconstructed',
  config: {
    architectures: ['Llama4ForConditionalGeneration'],
    model_type: 'llama4',
    boi_token_index: 200080,
    eoi_token_index: 200081,
    image_token_index: 200092,
    text_config: {
      model_type: 'llama4_text',
      attention_chunk_size: 8192,
      head_dim: 128,
      hidden_size: 5120,
      interleave_moe_layer_step: 1,
      intermediate_size: 8192,
      intermediate_size_mlp: 16384,
      max_position_embeddings: 10485760,
      no_rope_layers: [],
      num_attention_heads: 40,
      num_experts_per_tok: 1,
      num_hidden_layers: 48,
      num_key_value_heads: 8,
      num_local_experts: 16,
      rope_theta: 500000.0,
      use_qk_norm: true,
      vocab_size: 202048,
    },
    vision_config: { model_type: 'llama4_vision_model', hidden_size: 1408, num_hidden_layers: 34 },
  },
};
