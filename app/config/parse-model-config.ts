import { parseJsonText } from './json-text.js';
import { modelConfigFromObject, type ModelConfig } from './model-config.js';

/**
 * Reads the text of a config.json (the caller reads the file; app/config stays free of Node).
 * Throws ConfigError for invalid JSON (with line, column and position), a non-object, a missing
 * layer count or head count, ambiguous text sub-configs, or layer types transformers would refuse.
 */
export function parseModelConfig(jsonText: string, sourceName: string): ModelConfig {
  return modelConfigFromObject(parseJsonText(jsonText, sourceName), sourceName);
}
