import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseGenaiConfig } from '../../config/genai-config.js';
import { modelConfigFromGenai } from '../../config/genai-model-config.js';
import type { ModelConfig } from '../../config/model-config.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { layoutModelConfig } from '../../model-layout/layout-config.js';
import { readGuardedText } from '../files/guarded-read.js';
import { findModelFolder, type ModelFolder } from './model-folder.js';
import { readFolderConfigsAsync } from './read-model-layout.js';

/**
 * The model config the preflight judges, from what a user points at: a model folder or a graph in one
 * (the layout's config: config.json, else the one derived from genai_config.json), a config.json, or
 * a genai_config.json. Read through the guarded reader without blocking the host. Throws ConfigError
 * / ModelLoadError / GuardedFileError with a fix.
 */
export async function readModelConfigAt(path: string): Promise<ModelConfig> {
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats?.isFile() === true && path.endsWith('.json')) return readConfigFile(path);
  let folder: ModelFolder;
  try {
    folder = findModelFolder(path);
  } catch (error) {
    // A folder with its config but no graph yet is judged on its config alone (as `kvscope preflight`).
    const noGraph = (error as { diagnostics?: readonly { code: string }[] }).diagnostics?.some((d) => d.code === 'onnx-missing') === true;
    if (!noGraph || stats?.isDirectory() !== true) throw error;
    const configJson = join(path, 'config.json');
    return readConfigFile(existsSync(configJson) ? configJson : join(path, 'genai_config.json'));
  }
  const configs = await readFolderConfigsAsync(folder);
  return layoutModelConfig(configs.configJson, configs.genai?.config ?? null).config;
}

async function readConfigFile(path: string): Promise<ModelConfig> {
  const text = await readGuardedText(path, 'config');
  const sourceName = `${basename(dirname(path))}/${basename(path)}`;
  return basename(path) === 'genai_config.json' ? modelConfigFromGenai(parseGenaiConfig(text, sourceName)) : parseModelConfig(text, sourceName);
}
