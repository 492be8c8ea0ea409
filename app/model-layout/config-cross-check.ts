import type { GenaiConfig } from '../config/genai-config.js';
import type { ModelConfig } from '../config/model-config.js';
import { modelWarning, type ModelDiagnostic } from '../engine/model-diagnostic.js';

/**
 * A folder with both config.json (what transformers reads, so what the preflight's verdict is about)
 * and genai_config.json (what the export was built with): every field both describe must agree. A
 * disagreement is a warning naming both values; the graph itself is checked against config.json
 * (check-decoder-io.ts), which turns a real contradiction into an error.
 */
export function crossCheckGenai(config: ModelConfig, genai: GenaiConfig): ModelDiagnostic[] {
  const g = config.geometry;
  const d = genai.decoder;
  const pairs: [field: string, configValue: unknown, genaiField: string, genaiValue: unknown][] = [
    ['model_type', config.modelType ?? null, 'model.type', genai.modelType],
    ['num_hidden_layers', g.numLayers, 'model.decoder.num_hidden_layers', d.numHiddenLayers],
    ['num_attention_heads', g.numAttentionHeads, 'model.decoder.num_attention_heads', d.numAttentionHeads],
    ['num_key_value_heads', g.numKeyValueHeads, 'model.decoder.num_key_value_heads', d.numKeyValueHeads],
    ['head_dim', g.headDim, 'model.decoder.head_size', d.headSize],
    ['hidden_size', g.hiddenSize, 'model.decoder.hidden_size', d.hiddenSize],
    ['vocab_size', g.vocabSize, 'model.vocab_size', genai.vocabSize],
    ['layer_types', config.layers.allLayerTypes.join(','), 'model.decoder.layer_types', d.layerTypes?.join(',') ?? null],
  ];
  const diagnostics: ModelDiagnostic[] = [];
  for (const [field, configValue, genaiField, genaiValue] of pairs) {
    // genai leaves out what its runtime does not need; only a value given on both sides can disagree
    if (genaiValue === null || configValue === null || sameModelType(field, configValue, genaiValue) || configValue === genaiValue) continue;
    diagnostics.push(modelWarning('config-mismatch',
      `${config.sourceName} says ${field} = ${JSON.stringify(configValue)}, but ${genai.sourceName} says ${genaiField} = ${JSON.stringify(genaiValue)}. ` +
      'kvscope plans the cache from config.json (what transformers reads) and takes the graph\'s I/O names from genai_config.json.',
      'Check that both files come from the same export; the graph checks below say which one the graph agrees with.'));
  }
  return diagnostics;
}

/** genai's builder writes the text model type of some wrappers under the wrapper's name (gemma3 vs gemma3_text). */
function sameModelType(field: string, configValue: unknown, genaiValue: unknown): boolean {
  return field === 'model_type' && typeof configValue === 'string' && typeof genaiValue === 'string'
    && (configValue.startsWith(genaiValue) || genaiValue.startsWith(configValue));
}
