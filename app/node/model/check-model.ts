import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { ModelCheck } from '../../cli/preflight-command.js';
import { parseGenaiConfig } from '../../config/genai-config.js';
import { modelConfigFromGenai } from '../../config/genai-model-config.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { modelError, modelInfo } from '../../engine/model-diagnostic.js';
import { readGuardedTextSync } from '../files/guarded-read.js';
import { inspectModel } from './inspect-model.js';

/**
 * `kvscope preflight --config <folder | graph.onnx>`: the model checks of the workbench's model panel
 * (layout, config, the graph's I/O from its header), for the CLI. A folder that holds a config but
 * no graph is judged on its config alone, as before graphs were read.
 */
export async function checkModel(path: string, onnxFile?: string): Promise<ModelCheck> {
  const inspection = await inspectModel(path, onnxFile);
  if (inspection.folder === null && inspection.diagnostics[0]?.code === 'onnx-missing') return configOnly(resolve(path));
  return { config: inspection.config, layout: inspection.layoutSummary, diagnostics: inspection.diagnostics };
}

function configOnly(folder: string): ModelCheck {
  const note = modelInfo('layout-note', `${folder} holds no .onnx graph: only its config is judged (the graph's inputs and outputs are checked once it is there).`);
  try {
    for (const file of ['config.json', 'genai_config.json']) {
      const path = join(folder, file);
      if (!existsSync(path)) continue;
      const text = readGuardedTextSync(path, 'config');
      const sourceName = `${basename(folder)}/${file}`;
      const config = file === 'config.json' ? parseModelConfig(text, sourceName) : modelConfigFromGenai(parseGenaiConfig(text, sourceName));
      return { config, layout: null, diagnostics: [note] };
    }
  } catch (error) {
    return { config: null, layout: null, diagnostics: [modelError('config-invalid', error instanceof Error ? error.message : String(error))] };
  }
  return { config: null, layout: null, diagnostics: [modelError('config-missing', `${folder} has neither config.json nor genai_config.json.`)] };
}
