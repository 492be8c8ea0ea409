import type { PublishedConfig } from './published-config.js';

/** Hybrid models: attention mixed with convolution, mamba or linear-attention layers (spec §2.4). */

export const LFM2_350M: PublishedConfig = {
  id: 'LiquidAI/LFM2-350M',
  provenance: 'published',
  note: 'the first release lists full_attn_idxs; later revisions add a layer_types list with the same layers',
  config: {
    architectures: ['Lfm2ForCausalLM'],
    model_type: 'lfm2',
    block_dim: 1024,
    block_ff_dim: 6656,
    conv_L_cache: 3,
    conv_bias: false,
    full_attn_idxs: [2, 5, 8, 10, 12, 14],
    hidden_size: 1024,
    max_position_embeddings: 128000,
    norm_eps: 1e-05,
    num_attention_heads: 16,
    num_heads: 16,
    num_hidden_layers: 16,
    num_key_value_heads: 8,
    rope_theta: 1000000.0,
    vocab_size: 65536,
  },
};

export const AI21_JAMBA_1_5_MINI: PublishedConfig = {
  id: 'ai21labs/AI21-Jamba-1.5-Mini',
  provenance: 'published',
  config: {
    architectures: ['JambaForCausalLM'],
    model_type: 'jamba',
    attn_layer_offset: 4,
    attn_layer_period: 8,
    expert_layer_offset: 1,
    expert_layer_period: 2,
    hidden_size: 4096,
    intermediate_size: 14336,
    mamba_d_conv: 4,
    mamba_d_state: 16,
    mamba_expand: 2,
    max_position_embeddings: 262144,
    num_attention_heads: 32,
    num_experts: 16,
    num_experts_per_tok: 2,
    num_hidden_layers: 32,
    num_key_value_heads: 8,
    sliding_window: null,
    torch_dtype: 'bfloat16',
    transformers_version: '4.40.2',
    vocab_size: 65536,
  },
};

export const BAMBA_9B: PublishedConfig = {
  id: 'ibm-ai-platform/Bamba-9B',
  provenance: 'reconstructed',
  config: {
    architectures: ['BambaForCausalLM'],
    model_type: 'bamba',
    attn_layer_indices: [9, 18, 27],
    hidden_size: 4096,
    mamba_d_state: 128,
    num_attention_heads: 32,
    num_hidden_layers: 32,
    num_key_value_heads: 8,
    vocab_size: 128256,
  },
};

export const GRANITE_4_0_TINY_PREVIEW: PublishedConfig = {
  id: 'ibm-granite/granite-4.0-tiny-preview',
  provenance: 'reconstructed',
  note: 'the attention positions (5, 15, 25, 35) are not verified',
  config: {
    architectures: ['GraniteMoeHybridForCausalLM'],
    model_type: 'granitemoehybrid',
    hidden_size: 1536,
    layer_types: [
      'mamba', 'mamba', 'mamba', 'mamba', 'mamba',
      'attention', 'mamba', 'mamba', 'mamba', 'mamba',
      'mamba', 'mamba', 'mamba', 'mamba', 'mamba',
      'attention', 'mamba', 'mamba', 'mamba', 'mamba',
      'mamba', 'mamba', 'mamba', 'mamba', 'mamba',
      'attention', 'mamba', 'mamba', 'mamba', 'mamba',
      'mamba', 'mamba', 'mamba', 'mamba', 'mamba',
      'attention', 'mamba', 'mamba', 'mamba', 'mamba',
    ],
    num_attention_heads: 12,
    num_hidden_layers: 40,
    num_key_value_heads: 4,
    vocab_size: 49160,
  },
};

export const ZAMBA_7B_V1: PublishedConfig = {
  id: 'Zyphra/Zamba-7B-v1',
  provenance: 'reconstructed',
  config: {
    architectures: ['ZambaForCausalLM'],
    model_type: 'zamba',
    attn_layer_offset: 4,
    attn_layer_period: 6,
    hidden_size: 3712,
    num_attention_heads: 16,
    num_hidden_layers: 76,
    num_key_value_heads: 16,
    vocab_size: 32000,
  },
};

/** Falcon-H1 declares no layout: every block runs attention and mamba in parallel ("hybrid"). */
export const FALCON_H1: PublishedConfig = {
  id: 'tiiuae/Falcon-H1 (24-layer variant)',
  provenance: 'reconstructed',
  config: {
    architectures: ['FalconH1ForCausalLM'],
    model_type: 'falcon_h1',
    head_dim: 128,
    hidden_size: 2048,
    mamba_d_conv: 4,
    mamba_d_head: 64,
    mamba_d_ssm: 3072,
    mamba_d_state: 256,
    mamba_n_groups: 1,
    mamba_n_heads: 48,
    num_attention_heads: 8,
    num_hidden_layers: 24,
    num_key_value_heads: 2,
    vocab_size: 65537,
  },
};

export const NEMOTRON_H_8B: PublishedConfig = {
  id: 'nvidia/Nemotron-H-8B-Base-8K',
  provenance: 'reconstructed',
  config: {
    architectures: ['NemotronHForCausalLM'],
    model_type: 'nemotron_h',
    expand: 2,
    head_dim: 128,
    hidden_size: 4096,
    hybrid_override_pattern: 'M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-',
    mamba_head_dim: 64,
    mamba_num_heads: 128,
    max_position_embeddings: 8192,
    n_groups: 8,
    num_attention_heads: 32,
    num_hidden_layers: 52,
    num_key_value_heads: 8,
    ssm_state_size: 128,
    vocab_size: 131072,
  },
};

export const QWEN3_NEXT_80B_A3B: PublishedConfig = {
  id: 'Qwen/Qwen3-Next-80B-A3B-Instruct',
  provenance: 'reconstructed',
  config: {
    architectures: ['Qwen3NextForCausalLM'],
    model_type: 'qwen3_next',
    decoder_sparse_step: 1,
    full_attention_interval: 4,
    head_dim: 256,
    hidden_size: 2048,
    intermediate_size: 5120,
    linear_conv_kernel_dim: 4,
    linear_key_head_dim: 128,
    linear_num_key_heads: 16,
    linear_num_value_heads: 32,
    linear_value_head_dim: 128,
    max_position_embeddings: 262144,
    num_attention_heads: 16,
    num_experts: 512,
    num_experts_per_tok: 10,
    num_hidden_layers: 48,
    num_key_value_heads: 2,
    partial_rotary_factor: 0.25,
    rope_theta: 10000000,
    use_sliding_window: false,
    vocab_size: 151936,
  },
};

/** Converted from the original attn_type_list: softmax attention after every 7 lightning-attention layers. */
export const MINIMAX_TEXT_01: PublishedConfig = {
  id: 'MiniMaxAI/MiniMax-Text-01-hf',
  provenance: 'reconstructed',
  config: {
    architectures: ['MiniMaxForCausalLM'],
    model_type: 'minimax',
    head_dim: 128,
    hidden_size: 6144,
    layer_types: [
      'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
    ],
    max_position_embeddings: 10240000,
    num_attention_heads: 64,
    num_hidden_layers: 80,
    num_key_value_heads: 8,
    num_local_experts: 32,
    vocab_size: 200064,
  },
};
