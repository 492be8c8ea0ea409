import type { GenaiConfig } from './genai-config.js';
import { modelConfigFromObject, type ModelConfig } from './model-config.js';

/**
 * The model config transformers would read, written from a genai_config.json when the folder has no
 * config.json (model-builder folders ship none). Every field is the Hugging Face name of what the
 * builder wrote (`model.decoder.head_size` is `head_dim`, `model.context_length` is
 * `max_position_embeddings`), so the preflight derives layer types exactly as transformers would from
 * that config: explicit `layer_types` first (LFM2's conv layers are refused with transformers' own
 * message), else the family's rule, else the `sliding_window` fallback.
 */
export function modelConfigFromGenai(genai: GenaiConfig): ModelConfig {
  const { object, notes } = genaiAsConfigObject(genai);
  const config = modelConfigFromObject(object, genai.sourceName);
  return { ...config, notes: [...notes, ...config.notes] };
}

/** The config.json-shaped object (exported for the cross-check against a real config.json). */
export function genaiAsConfigObject(genai: GenaiConfig): { object: Record<string, unknown>; notes: string[] } {
  const d = genai.decoder;
  const notes: string[] = [];
  // The builder writes no query-head count for some families (its GPT-2 and LFM2 exports); the cache
  // only needs the KV geometry, so the KV head count stands in and the note says so.
  const numAttentionHeads = d.numAttentionHeads ?? d.numKeyValueHeads;
  if (d.numAttentionHeads === null && d.numKeyValueHeads !== null) {
    notes.push(`${genai.sourceName} gives no num_attention_heads; kvscope takes num_key_value_heads (${d.numKeyValueHeads}) for it (the KV cache depends only on the KV heads and head size).`);
  }
  const object: Record<string, unknown> = { model_type: genai.modelType, num_hidden_layers: d.numHiddenLayers };
  const set = (key: string, value: unknown): void => {
    if (value !== null && value !== undefined) object[key] = value;
  };
  set('num_attention_heads', numAttentionHeads);
  set('num_key_value_heads', d.numKeyValueHeads);
  set('head_dim', d.headSize);
  set('hidden_size', d.hiddenSize);
  set('vocab_size', genai.vocabSize);
  set('max_position_embeddings', genai.contextLength);
  set('layer_types', d.layerTypes);
  set('sliding_window', d.slidingWindow);
  set('bos_token_id', genai.bosTokenId);
  set('eos_token_id', genai.eosTokenIds.length === 0 ? null : genai.eosTokenIds.length === 1 ? genai.eosTokenIds[0] : [...genai.eosTokenIds]);
  set('pad_token_id', genai.padTokenId);
  return { object, notes };
}
