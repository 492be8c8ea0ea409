import { ConfigError } from '../errors.js';
import { describeValue, isConfigObject, type ConfigObject } from './config-object.js';
import { parseJsonText } from './json-text.js';

/**
 * An ONNX Runtime GenAI `genai_config.json` (the model builder's file: Phi-3/Phi-4 ONNX repositories,
 * GENAI-ONNX community exports, AI Toolkit/Foundry downloads), the fields kvscope reads. The names
 * and nesting are onnxruntime-genai's (src/config.h): the decoder's geometry sits under
 * `model.decoder`, its graph I/O names under `model.decoder.inputs/outputs` with `%d` for the layer.
 */
export interface GenaiConfig {
  readonly sourceName: string;
  /** `model.type`: the Hugging Face model_type the builder exported (`llama`, `phi3`, `gpt2`, `lfm2`, …) */
  readonly modelType: string;
  readonly bosTokenId: number | null;
  /** one id or several (the builder writes a list for models with several EOS tokens) */
  readonly eosTokenIds: readonly number[];
  readonly padTokenId: number | null;
  readonly vocabSize: number | null;
  /** `model.context_length`: the longest sequence the export supports */
  readonly contextLength: number | null;
  readonly decoder: GenaiDecoder;
  /** `search.past_present_share_buffer`: the builder's GQA graphs write present into past's buffer */
  readonly pastPresentShareBuffer: boolean;
}

export interface GenaiDecoder {
  /** `decoder.filename`, relative to the folder: the graph ('' when the decoder is a `pipeline`) */
  readonly filename: string;
  /**
   * `decoder.pipeline`: the split model onnxruntime-genai chains itself (DecoderOnlyPipelineModel),
   * one stage per graph (`embeddings`, `transformer`, `lm_head`, …) in order; null for one decoder graph.
   * kvscope runs one decoder graph, so resolve-layout.ts refuses a pipeline with the reason.
   */
  readonly pipeline: readonly GenaiPipelineStage[] | null;
  readonly numHiddenLayers: number;
  readonly numAttentionHeads: number | null;
  readonly numKeyValueHeads: number | null;
  readonly headSize: number | null;
  readonly hiddenSize: number | null;
  readonly layerTypes: readonly string[] | null;
  /** `decoder.sliding_window.window_size` (an object in genai; a bare number accepted too) */
  readonly slidingWindow: number | null;
  /** `decoder.inputs`: kvscope's role name → the graph's name or `%d` pattern, as given */
  readonly inputs: Readonly<Record<string, string>>;
  readonly outputs: Readonly<Record<string, string>>;
}

/** One stage of a genai `decoder.pipeline`: its name and its graph. */
export interface GenaiPipelineStage {
  readonly name: string;
  readonly filename: string | null;
}

/** Parses the text of a genai_config.json. Throws ConfigError naming the field and what to do. */
export function parseGenaiConfig(jsonText: string, sourceName: string): GenaiConfig {
  const root = parseJsonText(jsonText, sourceName);
  if (!isConfigObject(root)) throw new ConfigError(`${sourceName} should hold a JSON object but holds ${describeValue(root)}.`);
  const model = objectField(root, 'model', sourceName);
  const where = `${sourceName} (model)`;
  const decoderObject = objectField(model, 'decoder', where);
  const decoderWhere = `${sourceName} (model.decoder)`;
  const type = model['type'];
  if (typeof type !== 'string' || type === '') {
    throw new ConfigError(`${where} has no "type" (the Hugging Face model_type the model builder exported). Add "type": "<model_type>" under "model".`);
  }
  const pipeline = pipelineStages(decoderObject['pipeline']);
  const filename = pipeline !== null && decoderObject['filename'] === undefined ? '' : decoderObject['filename'];
  if (pipeline === null && (typeof filename !== 'string' || filename === '')) {
    throw new ConfigError(`${decoderWhere} has no "filename": genai_config.json names the decoder graph there. Add "filename": "model.onnx".`);
  }
  const numHiddenLayers = integerField(decoderObject, 'num_hidden_layers', decoderWhere);
  if (numHiddenLayers === null || numHiddenLayers < 1) {
    throw new ConfigError(`${decoderWhere} has no positive "num_hidden_layers", which kvscope needs to plan the cache. Add it under "model.decoder".`);
  }
  const search = root['search'];
  return {
    sourceName,
    modelType: type,
    bosTokenId: integerField(model, 'bos_token_id', where),
    eosTokenIds: tokenIds(model['eos_token_id'], where),
    padTokenId: tokenIdOrNull(model['pad_token_id'], 'pad_token_id', where),
    vocabSize: integerField(model, 'vocab_size', where),
    contextLength: integerField(model, 'context_length', where),
    decoder: {
      filename: typeof filename === 'string' ? filename : '',
      pipeline,
      numHiddenLayers,
      numAttentionHeads: integerField(decoderObject, 'num_attention_heads', decoderWhere),
      numKeyValueHeads: integerField(decoderObject, 'num_key_value_heads', decoderWhere),
      headSize: integerField(decoderObject, 'head_size', decoderWhere),
      hiddenSize: integerField(decoderObject, 'hidden_size', decoderWhere),
      layerTypes: stringListField(decoderObject, 'layer_types', decoderWhere),
      slidingWindow: slidingWindowOf(decoderObject['sliding_window'], decoderWhere),
      inputs: nameMap(decoderObject['inputs'], `${decoderWhere}.inputs`),
      outputs: nameMap(decoderObject['outputs'], `${decoderWhere}.outputs`),
    },
    pastPresentShareBuffer: isConfigObject(search) && search['past_present_share_buffer'] === true,
  };
}

/**
 * `decoder.pipeline` as onnxruntime-genai writes it: a list of objects, each naming one stage (or
 * several) with its `filename`. Null when absent or empty (one decoder graph).
 */
function pipelineStages(value: unknown): GenaiPipelineStage[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const stages: GenaiPipelineStage[] = [];
  for (const item of value) {
    if (!isConfigObject(item)) continue;
    for (const [name, stage] of Object.entries(item)) {
      const file = isConfigObject(stage) ? stage['filename'] : undefined;
      stages.push({ name, filename: typeof file === 'string' && file !== '' ? file : null });
    }
  }
  return stages.length === 0 ? null : stages;
}

function objectField(config: ConfigObject, name: string, where: string): ConfigObject {
  const value = config[name];
  if (isConfigObject(value)) return value;
  throw new ConfigError(`${where} has no "${name}" object (found ${describeValue(value)}); an ONNX Runtime GenAI genai_config.json keeps the model under "model" and its graph under "model.decoder".`);
}

function integerField(config: ConfigObject, name: string, where: string): number | null {
  const value = config[name];
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  throw new ConfigError(`${where}: "${name}" should be an integer but is ${describeValue(value)}. Fix it in genai_config.json.`);
}

function stringListField(config: ConfigObject, name: string, where: string): readonly string[] | null {
  const value = config[name];
  if (value === undefined || value === null) return null;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value as string[];
  throw new ConfigError(`${where}: "${name}" should be a list of strings but is ${describeValue(value)}. Fix it in genai_config.json.`);
}

function tokenIds(value: unknown, where: string): number[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((item) => {
    const id = tokenIdOrNull(item, 'eos_token_id', where);
    if (id === null) throw new ConfigError(`${where}: "eos_token_id" holds ${describeValue(item)}; it should be token ids.`);
    return id;
  });
}

function tokenIdOrNull(value: unknown, name: string, where: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  throw new ConfigError(`${where}: "${name}" should be a token id (a non-negative integer) but is ${describeValue(value)}. Fix it in genai_config.json.`);
}

function slidingWindowOf(value: unknown, where: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (isConfigObject(value)) return integerField(value, 'window_size', `${where}.sliding_window`);
  throw new ConfigError(`${where}: "sliding_window" should be an object with "window_size" but is ${describeValue(value)}.`);
}

/** `inputs`/`outputs`: role → graph name; genai's own keys (session options) are not strings and are skipped. */
function nameMap(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isConfigObject(value)) throw new ConfigError(`${where} should be an object of graph names but is ${describeValue(value)}.`);
  const names: Record<string, string> = {};
  for (const [role, name] of Object.entries(value)) if (typeof name === 'string') names[role] = name;
  return names;
}
