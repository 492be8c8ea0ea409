import { statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { parseGenaiConfig } from '../../config/genai-config.js';
import { modelConfigFromGenai } from '../../config/genai-model-config.js';
import type { ModelConfig } from '../../config/model-config.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { layoutModelConfig } from '../../model-layout/layout-config.js';
import { readGuardedText } from '../files/guarded-read.js';
import { findModelFolder } from './model-folder.js';
import { readFolderConfigsAsync } from './read-model-layout.js';

/**
 * The model config the preflight judges, from what a user points at: a model folder or a graph in one
 * (the layout's config: config.json, else the one derived from genai_config.json), a config.json, or
 * a genai_config.json. Read through the guarded reader without blocking the host. Throws ConfigError
 * / ModelLoadError / GuardedFileError with a fix.
 */
export async function readModelConfigAt(path: string): Promise<ModelConfig> {
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats?.isFile() === true && path.endsWith('.json')) {
    const text = await readGuardedText(path, 'config');
    const sourceName = `${basename(dirname(path))}/${basename(path)}`;
    return basename(path) === 'genai_config.json' ? modelConfigFromGenai(parseGenaiConfig(text, sourceName)) : parseModelConfig(text, sourceName);
  }
  const configs = await readFolderConfigsAsync(findModelFolder(path));
  return layoutModelConfig(configs.configJson, configs.genai?.config ?? null).config;
}
