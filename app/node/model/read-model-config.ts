import { readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { parseGenaiConfig } from '../../config/genai-config.js';
import { modelConfigFromGenai } from '../../config/genai-model-config.js';
import type { ModelConfig } from '../../config/model-config.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { ConfigError } from '../../errors.js';
import { describeFsError } from '../fs-errors.js';
import { findModelFolder } from './model-folder.js';
import { readModelLayout } from './read-model-layout.js';

/**
 * The model config the preflight judges, from what a user points at: a model folder or a graph in one
 * (the layout's config: config.json, else the one derived from genai_config.json), a config.json, or
 * a genai_config.json. Throws ConfigError / ModelLoadError with a fix.
 */
export function readModelConfigAt(path: string, onnxFile?: string): ModelConfig {
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats?.isFile() === true && path.endsWith('.json')) {
    const text = readText(path);
    const sourceName = `${basename(dirname(path))}/${basename(path)}`;
    return basename(path) === 'genai_config.json' ? modelConfigFromGenai(parseGenaiConfig(text, sourceName)) : parseModelConfig(text, sourceName);
  }
  return readModelLayout(findModelFolder(path), onnxFile).config;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(describeFsError(error, path, 'read'));
  }
}
