import { modelConfigFromObject, type ModelConfig } from '../../app/config/model-config.js';
import { AI21_JAMBA_1_5_MINI, LFM2_350M, QWEN3_NEXT_80B_A3B } from '../../app/config/test-support/hybrid-model-configs.js';
import { GEMMA_3_1B_IT, LLAMA_3_2_1B_INSTRUCT, MISTRAL_7B_V0_3 } from '../../app/config/test-support/dense-model-configs.js';
import type { ModelSource } from '../../app/protocol/workbench-api.js';
import { buildSyntheticModelJsonFiles } from '../../app/synthetic/synthetic-model.js';
import type { KvDtype } from '../../app/tensor/kv-tensor.js';

/** A model the fake API knows: the config it parses, its graph files and KV dtype. */
export interface FakeModel {
  readonly displayName: string;
  readonly folder: string;
  readonly config: ModelConfig;
  readonly onnxFiles: readonly string[];
  /** KV dtype per graph file */
  readonly kvDtypes: Readonly<Record<string, KvDtype>>;
  /** where its chat template would come from; null: none (base models, the synthetic ones) */
  readonly chatTemplate: string | null;
  /** false for a folder without tokenizer.json: prompts are then given as token ids */
  readonly hasTokenizer: boolean;
}

/** Where the fake pretends its folder models live; e2e tests type these paths. */
export const FAKE_MODELS_ROOT = '/fake/models';

/** stories260k's config.json (shared/models/stories260k), so fake runs have its geometry. */
const STORIES_260K_CONFIG = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', bos_token_id: 1, eos_token_id: 2, head_dim: 8, hidden_size: 64,
  intermediate_size: 172, max_position_embeddings: 512, num_attention_heads: 8, num_hidden_layers: 5, num_key_value_heads: 4,
  rope_theta: 10000.0, tie_word_embeddings: true, torch_dtype: 'float32', vocab_size: 512,
};

/**
 * The config transformers would read for ../shared/models/ort-genai-tiny/lfm2-hybrid-stub (derived from its
 * genai_config.json): conv layers 0 and 2, attention 1 and 3, 4 KV heads of 8, 1000 ids, no tokenizer.
 */
const LFM2_HYBRID_STUB_CONFIG = {
  model_type: 'lfm2', num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 4, head_dim: 8, hidden_size: 32,
  layer_types: ['conv', 'full_attention', 'conv', 'full_attention'], vocab_size: 1000, max_position_embeddings: 512,
  bos_token_id: 98, eos_token_id: 98, pad_token_id: 98,
};

const FOLDER_MODELS: Readonly<Record<string, { config: Readonly<Record<string, unknown>>; onnx: readonly string[]; dtype: KvDtype; chat?: true; noTokenizer?: true }>> = {
  'stories260k': { config: STORIES_260K_CONFIG, onnx: ['onnx/model.onnx', 'onnx/model_fp16.onnx'], dtype: 'float32' },
  // 32 layers × 8 KV heads × 128: the 10,000-step streaming check uses this one
  'mistral-7b-v0.3': { config: MISTRAL_7B_V0_3.config, onnx: ['onnx/model_fp16.onnx', 'onnx/model_q4.onnx'], dtype: 'float16' },
  'llama-3.2-1b-instruct': { config: LLAMA_3_2_1B_INSTRUCT.config, onnx: ['onnx/model_fp16.onnx'], dtype: 'float16', chat: true },
  'gemma-3-1b-it': { config: GEMMA_3_1B_IT.config, onnx: ['onnx/model_fp16.onnx'], dtype: 'float16', chat: true },
  'jamba-1.5-mini': { config: AI21_JAMBA_1_5_MINI.config, onnx: ['onnx/model_fp16.onnx'], dtype: 'float16' },
  'lfm2-350m': { config: LFM2_350M.config, onnx: ['onnx/model.onnx'], dtype: 'float32' },
  'qwen3-next-80b-a3b': { config: QWEN3_NEXT_80B_A3B.config, onnx: ['onnx/model_q4.onnx'], dtype: 'float16' },
  'lfm2-hybrid-stub': { config: LFM2_HYBRID_STUB_CONFIG, onnx: ['decoder.onnx'], dtype: 'float32', noTokenizer: true },
};

export const FAKE_FOLDER_MODEL_NAMES: readonly string[] = Object.keys(FOLDER_MODELS);

const cache = new Map<string, FakeModel>();

/** The fake's model for a source, or null when the "folder" does not exist. */
export function fakeModel(source: ModelSource): FakeModel | null {
  const key = source.kind === 'folder' ? normalizeFolder(source.path) : source.kind;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const model = buildFakeModel(source, key);
  if (model !== null) cache.set(key, model);
  return model;
}

function buildFakeModel(source: ModelSource, key: string): FakeModel | null {
  if (source.kind !== 'folder') {
    const files = buildSyntheticModelJsonFiles(source.kind);
    const configText = files.files.find((file) => file.path === 'config.json')!.content as string;
    return {
      displayName: source.kind,
      folder: `/home/researcher/.cache/kvscope/synthetic-v1/${source.kind}`,
      config: modelConfigFromObject(JSON.parse(configText), `${source.kind}/config.json`),
      onnxFiles: ['onnx/model.onnx'],
      kvDtypes: { 'onnx/model.onnx': 'float32' },
      chatTemplate: null,
      hasTokenizer: true,
    };
  }
  const name = key.startsWith(`${FAKE_MODELS_ROOT}/`) ? key.slice(FAKE_MODELS_ROOT.length + 1) : key.split('/').at(-1) ?? '';
  const entry = FOLDER_MODELS[name];
  if (entry === undefined) return null;
  const kvDtypes: Record<string, KvDtype> = {};
  for (const file of entry.onnx) kvDtypes[file] = file.includes('fp16') ? 'float16' : entry.dtype;
  return {
    displayName: name,
    folder: key,
    config: modelConfigFromObject(structuredClone(entry.config), `${name}/config.json`),
    onnxFiles: entry.onnx,
    kvDtypes,
    chatTemplate: entry.chat === true ? 'tokenizer_config.json' : null,
    hasTokenizer: entry.noTokenizer !== true,
  };
}

function normalizeFolder(path: string): string {
  const trimmed = path.trim().replace(/\/+$/, '');
  return trimmed.length === 0 ? '/' : trimmed;
}
