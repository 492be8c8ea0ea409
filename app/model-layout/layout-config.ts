import type { ConfigObject } from '../config/config-object.js';
import type { GenaiConfig } from '../config/genai-config.js';
import { modelConfigFromGenai } from '../config/genai-model-config.js';
import { modelConfigFromObject, type ModelConfig } from '../config/model-config.js';
import type { ModelDiagnostic } from '../engine/model-diagnostic.js';
import { crossCheckGenai } from './config-cross-check.js';

/**
 * The model config a layout plans the cache from: config.json when the folder has one (what
 * transformers reads, so what its verdict is about), cross-checked against genai_config.json when
 * both exist; else the config derived from genai_config.json. Throws ConfigError as parseModelConfig does.
 */
export function layoutModelConfig(configJson: { readonly root: ConfigObject; readonly sourceName: string } | null, genai: GenaiConfig | null): {
  config: ModelConfig;
  diagnostics: ModelDiagnostic[];
} {
  if (configJson !== null) {
    const config = modelConfigFromObject(configJson.root, configJson.sourceName);
    return { config, diagnostics: genai === null ? [] : crossCheckGenai(config, genai) };
  }
  if (genai === null) throw new TypeError('layoutModelConfig needs config.json or genai_config.json');
  return { config: modelConfigFromGenai(genai), diagnostics: [] };
}
