import { basename, join } from 'node:path';
import type { ModelConfig } from '../../config/model-config.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import type { DecoderIo } from '../../engine/decoder-io.js';
import { renderChatPrompt } from '../../engine/chat-prompt.js';
import { modelError, modelWarning, type ModelDiagnostic, type ModelDiagnosticCode } from '../../engine/model-diagnostic.js';
import { jsonSyntaxProblem } from '../../json-syntax.js';
import { checkReadableFile, readGuardedText } from '../files/guarded-read.js';
import { createOrtDecoderSession } from '../ort/ort-decoder-session.js';
import { chooseVariant, findModelFolder, type ModelFolder, type OnnxVariant } from './model-folder.js';
import { checkGraph } from './open-model.js';
import { loadTokenizer, readTokenizerTexts } from './load-tokenizer.js';

/** What the UI shows about a model before a run: its graphs, and every problem found, never thrown. */
export interface ModelInspection {
  readonly path: string;
  readonly folder: ModelFolder | null;
  readonly variants: readonly OnnxVariant[];
  /** the graph that was checked */
  readonly variant: OnnxVariant | null;
  readonly config: ModelConfig | null;
  readonly io: DecoderIo | null;
  /** where the chat template comes from (`tokenizer_config.json`, `chat_template.jinja`), null when there is none */
  readonly chatTemplate: string | null;
  /** errors first; `ok` when there is none */
  readonly diagnostics: readonly ModelDiagnostic[];
  readonly ok: boolean;
}

/**
 * Checks a model folder the way a run would (folder, config.json, tokenizer, graph I/O against the
 * config) on the CPU provider, collecting diagnostics instead of throwing, and releases the session.
 */
export async function inspectModel(path: string, onnxFile?: string): Promise<ModelInspection> {
  const diagnostics: ModelDiagnostic[] = [];
  const result = (parts: Partial<ModelInspection>): ModelInspection => {
    const sorted = [...diagnostics].sort((a, b) => rank(a) - rank(b));
    return {
      path, folder: null, variants: [], variant: null, config: null, io: null, chatTemplate: null, ...parts,
      diagnostics: sorted, ok: !sorted.some((d) => d.severity === 'error'),
    };
  };
  let folder: ModelFolder;
  let variant: OnnxVariant;
  try {
    folder = findModelFolder(path);
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'model-folder-missing'));
    return result({});
  }
  try {
    variant = chooseVariant(folder, onnxFile);
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'onnx-missing'));
    return result({ folder, variants: folder.variants });
  }
  let config: ModelConfig | null = null;
  try {
    // Read without blocking: a host answers other requests meanwhile (app/node/files/guarded-read.ts).
    config = parseModelConfig(await readGuardedText(folder.configPath, 'config'), `${basename(folder.folder)}/config.json`);
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'config-invalid', 'Fix config.json (the message says where), or use the one from the model\'s repository.'));
  }
  if (folder.generationConfigPath !== null) {
    // What a run reads next to config.json: a FIFO or a device there is said now, not at Run.
    const path = folder.generationConfigPath;
    try {
      const text = await readGuardedText(path, 'generation-config');
      try {
        JSON.parse(text);
      } catch (error) {
        diagnostics.push(modelError('generation-config-invalid', `${path} is not valid JSON${jsonSyntaxProblem(error, text)}.`, 'Fix the JSON, or delete generation_config.json to fall back to config.json.'));
      }
    } catch (error) {
      diagnostics.push(...diagnosticsOf(error, 'generation-config-invalid'));
    }
  }
  let chatTemplate: string | null = null;
  try {
    const template = loadTokenizer(folder, await readTokenizerTexts(folder)).chatTemplate;
    if (template !== null) {
      try {
        renderChatPrompt(template, 'Hello');
        chatTemplate = template.source;
      } catch (error) {
        const fix = (error as { fix?: string }).fix;
        diagnostics.push(modelWarning('chat-template-invalid', error instanceof Error ? error.message : String(error), fix));
      }
    }
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'tokenizer-missing'));
  }
  let io: DecoderIo | null = null;
  try {
    for (const file of [variant.file, ...variant.externalData]) await checkReadableFile(join(folder.folder, file), 'onnx');
    const session = await createOrtDecoderSession(join(folder.folder, variant.file), { executionProvider: 'cpu', displayName: variant.file });
    try {
      if (config !== null) {
        const checked = checkGraph(session.inputs, session.outputs, config, variant.file);
        io = checked.io;
        diagnostics.push(...checked.diagnostics);
      }
    } finally {
      await session.dispose();
    }
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'onnx-unreadable'));
  }
  return result({ folder, variants: folder.variants, variant, config, io, chatTemplate });
}

function diagnosticsOf(error: unknown, code: ModelDiagnosticCode, fallbackFix?: string): ModelDiagnostic[] {
  const carried = (error as { diagnostics?: unknown }).diagnostics;
  if (Array.isArray(carried) && carried.length > 0) return carried as ModelDiagnostic[];
  const message = error instanceof Error ? error.message : String(error);
  const fix = (error as { fix?: unknown }).fix;
  return [modelError(code, message, typeof fix === 'string' ? fix : fallbackFix)];
}

function rank(d: ModelDiagnostic): number {
  return d.severity === 'error' ? 0 : d.severity === 'warning' ? 1 : 2;
}
