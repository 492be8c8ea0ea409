import type { ModelConfig } from '../../config/model-config.js';
import type { DecoderIo } from '../../engine/decoder-io.js';
import { renderChatPrompt } from '../../engine/chat-prompt.js';
import type { IoNaming } from '../../engine/io-naming.js';
import { modelError, modelWarning, type ModelDiagnostic, type ModelDiagnosticCode } from '../../engine/model-diagnostic.js';
import { analyzeLayoutGraph } from '../../model-layout/analyze-layout-graph.js';
import type { ExternalDataReport } from '../../model-layout/external-data.js';
import type { GraphPrecision } from '../../model-layout/graph-precision.js';
import { layoutModelConfig } from '../../model-layout/layout-config.js';
import { summarizeLayout, type LayoutSummary } from '../../model-layout/layout-summary.js';
import type { ModelLayout } from '../../model-layout/model-layout.js';
import { resolveLayout } from '../../model-layout/resolve-layout.js';
import { jsonSyntaxProblem } from '../../json-syntax.js';
import { readGuardedText } from '../files/guarded-read.js';
import { loadTokenizer, readTokenizerTexts } from './load-tokenizer.js';
import { findModelFolder, type ModelFolder, type OnnxVariant } from './model-folder.js';
import { readFolderConfigsAsync, readLayoutHeaders, type FolderConfigs } from './read-model-layout.js';

/** What the UI and the preflight show about a model before a run: every problem found, never thrown. */
export interface ModelInspection {
  readonly path: string;
  readonly folder: ModelFolder | null;
  readonly variants: readonly OnnxVariant[];
  /** the graph the user chose (for the legacy pair: decoder_model.onnx) */
  readonly variant: OnnxVariant | null;
  /** which config and which graph(s), and what kind of export; null when the folder could not be resolved */
  readonly layout: ModelLayout | null;
  readonly config: ModelConfig | null;
  readonly io: DecoderIo | null;
  /** the I/O names the graph was read with */
  readonly naming: IoNaming | null;
  /** from the graph's tensor types */
  readonly precision: GraphPrecision | null;
  readonly externalData: ExternalDataReport | null;
  /** the layout as the UI and the CLI show it; null when the folder could not be resolved */
  readonly layoutSummary: LayoutSummary | null;
  /** where the chat template comes from (`tokenizer_config.json`, `chat_template.jinja`), null when there is none */
  readonly chatTemplate: string | null;
  readonly hasTokenizer: boolean;
  /** errors first; `ok` when there is none */
  readonly diagnostics: readonly ModelDiagnostic[];
  readonly ok: boolean;
}

/**
 * Checks a model folder the way a run would, without loading it: folder, layout, config (config.json
 * or genai_config.json, cross-checked when both exist), tokenizer, and the graph's I/O read from its
 * protobuf header (weights never read, so this is fast for multi-GB models) against the config.
 */
export async function inspectModel(path: string, onnxFile?: string): Promise<ModelInspection> {
  const diagnostics: ModelDiagnostic[] = [];
  const result = (parts: Partial<ModelInspection>): ModelInspection => {
    const sorted = [...diagnostics].sort((a, b) => rank(a) - rank(b));
    const layoutSummary = parts.layout == null ? null : summarizeLayout(parts.layout, {
      naming: parts.naming ?? null, io: parts.io ?? null, precision: parts.precision ?? null, externalData: parts.externalData ?? null,
    });
    return {
      path, folder: null, variants: [], variant: null, layout: null, config: null, io: null, naming: null, precision: null, externalData: null,
      chatTemplate: null, hasTokenizer: false, ...parts, layoutSummary, diagnostics: sorted, ok: !sorted.some((d) => d.severity === 'error'),
    };
  };
  let folder: ModelFolder;
  try {
    folder = findModelFolder(path);
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'model-folder-missing'));
    return result({});
  }
  const base = { folder, variants: folder.variants };
  let configs: FolderConfigs;
  try {
    // Read without blocking: a host answers other requests meanwhile (app/node/files/guarded-read.ts).
    configs = await readFolderConfigsAsync(folder);
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'config-invalid', 'Fix the config file (the message says where), or use the one from the model\'s repository.'));
    configs = { configJson: null, genai: null, transformersJs: null };
  }
  let layout: ModelLayout;
  try {
    layout = resolveLayout({
      listing: folder.listing, configJson: configs.configJson?.root ?? null, genai: configs.genai?.config ?? null, onnxFile, pointedFile: folder.pointedFile,
    });
  } catch (error) {
    if (diagnostics.length === 0) diagnostics.push(...diagnosticsOf(error, 'onnx-missing'));
    return result(base);
  }
  const variant = folder.variants.find((v) => v.file === (layout.prefillGraph ?? layout.graph)) ?? null;
  let config: ModelConfig | null = null;
  try {
    const read = layoutModelConfig(configs.configJson, configs.genai?.config ?? null);
    config = read.config;
    diagnostics.push(...read.diagnostics);
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'config-invalid', `Fix ${layout.configFile} (the message says where), or use the one from the model's repository.`));
  }
  await checkGenerationConfig(folder, diagnostics);
  const chatTemplate = await checkTokenizer(folder, diagnostics);
  const parts: Partial<ModelInspection> = { ...base, variant, layout, config, chatTemplate, hasTokenizer: folder.tokenizerPath !== null };
  try {
    const headers = await readLayoutHeaders(folder, layout);
    const analysis = analyzeLayoutGraph(headers, folder.listing, {
      layout, config, genai: configs.genai?.config ?? null, transformersJs: configs.transformersJs,
    });
    diagnostics.push(...analysis.diagnostics);
    return result({ ...parts, io: analysis.io, naming: analysis.naming, precision: analysis.precision, externalData: analysis.externalData });
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'onnx-unreadable'));
    return result(parts);
  }
}

/** What a run reads next to the config: a FIFO or a device there, or bad JSON, is said now, not at Run. */
async function checkGenerationConfig(folder: ModelFolder, diagnostics: ModelDiagnostic[]): Promise<void> {
  const path = folder.generationConfigPath;
  if (path === null) return;
  try {
    const text = await readGuardedText(path, 'generation-config');
    try {
      JSON.parse(text);
    } catch (error) {
      diagnostics.push(modelError('generation-config-invalid', `${path} is not valid JSON${jsonSyntaxProblem(error, text)}.`,
        'Fix the JSON, or delete generation_config.json to fall back to the model config.'));
    }
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'generation-config-invalid'));
  }
}

/** The tokenizer as a run would load it; a folder without one can still run from prompt ids. */
async function checkTokenizer(folder: ModelFolder, diagnostics: ModelDiagnostic[]): Promise<string | null> {
  if (folder.tokenizerPath === null) {
    diagnostics.push(modelWarning('tokenizer-missing',
      `${folder.folder} has no tokenizer.json: prompts cannot be encoded, and generated tokens are shown as ids.`,
      'Give the prompt as token ids (the run panel takes them in place of text; kvscope run --prompt-ids 1,2,3), or copy tokenizer.json and tokenizer_config.json from the model\'s repository.'));
    return null;
  }
  try {
    const template = loadTokenizer(folder, await readTokenizerTexts(folder)).chatTemplate;
    if (template === null) return null;
    try {
      renderChatPrompt(template, 'Hello');
      return template.source;
    } catch (error) {
      const fix = (error as { fix?: string }).fix;
      diagnostics.push(modelWarning('chat-template-invalid', error instanceof Error ? error.message : String(error), fix));
      return null;
    }
  } catch (error) {
    diagnostics.push(...diagnosticsOf(error, 'tokenizer-invalid'));
    return null;
  }
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
