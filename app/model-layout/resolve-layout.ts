import type { ConfigObject } from '../config/config-object.js';
import type { GenaiConfig } from '../config/genai-config.js';
import { ModelLoadError } from '../engine/engine-errors.js';
import { modelError } from '../engine/model-diagnostic.js';
import { directoryOf, parseGraphFileName, variantFile, type GraphFileName } from './graph-files.js';
import { LAYOUT_LABELS, type FolderListing, type LayoutKind, type ModelLayout } from './model-layout.js';
import { readTransformersJsConfig } from './transformers-js-config.js';

export interface LayoutRequest {
  readonly listing: FolderListing;
  /** config.json as parsed, or null when the folder has none */
  readonly configJson: ConfigObject | null;
  readonly genai: GenaiConfig | null;
  /** the graph the user asked for: a path relative to the folder, or just a file name */
  readonly onnxFile?: string | undefined;
  /** the .onnx file the model path pointed at, relative to the folder */
  readonly pointedFile?: string | null;
}

/** Every `.onnx` of the listing, `onnx/model.onnx` first, then `model.onnx`, then by path. */
export function graphFiles(listing: FolderListing): string[] {
  const rank = (file: string): number => (file === 'onnx/model.onnx' ? 0 : file === 'model.onnx' ? 1 : 2);
  return listing.files.map((file) => file.path).filter((path) => path.endsWith('.onnx')).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/**
 * Which config and which graph(s) a run uses, and what kind of export the folder is. The graph:
 * the one asked for, else genai_config.json's `decoder.filename`, else `onnx/model.onnx` /
 * `model.onnx`, else transformers.js' default dtype (`transformers.js_config.dtype`), else the
 * merged decoder, else the legacy decoder pair, else the only graph. Throws ModelLoadError (with a
 * diagnostic) when the folder has no config at all or the graph cannot be chosen.
 */
export function resolveLayout(request: LayoutRequest): ModelLayout {
  const { listing, configJson, genai } = request;
  if (configJson === null && genai === null) {
    throw layoutError('config-missing',
      `${listing.folder} has neither config.json nor genai_config.json. kvscope reads the model's layers, KV heads and head_dim from one of them to plan the cache.`,
      'Put the config.json of the model (from its Hugging Face repository) in this folder, or the genai_config.json its ONNX Runtime GenAI export came with.');
  }
  if (genai?.decoder.pipeline != null && request.onnxFile === undefined && (request.pointedFile ?? null) === null) throw pipelineRefusal(genai, listing);
  const graphs = graphFiles(listing);
  if (graphs.length === 0) {
    throw layoutError('onnx-missing', `${listing.folder} has a config but no .onnx graph (looked in onnx/ and the folder itself).`,
      'Download the ONNX export (onnx/model.onnx, or a variant such as model_fp16.onnx) into the folder.');
  }
  const chosen = parseGraphFileName(chooseGraph(request, graphs));
  const pairGraph = chosen.role === 'decoder' ? variantFile(directoryOf(chosen.file), 'decoder_with_past_model', chosen.dtype) : null;
  const pair = pairGraph !== null && graphs.includes(pairGraph) ? pairGraph : null;
  const kind = layoutKind(chosen, genai, pair, configJson);
  const configFile = configJson !== null ? 'config.json' : 'genai_config.json';
  return {
    kind,
    label: `${LAYOUT_LABELS[kind]}${kind === 'transformers.js' ? ` ${chosen.dtype ?? 'fp32'}` : ''} (${[configFile, ...(pair === null ? [chosen.file] : [chosen.file, pair])].join(', ')})`,
    configFile,
    crossCheck: configJson !== null && genai !== null ? 'genai_config.json' : null,
    graph: pair ?? chosen.file,
    prefillGraph: pair === null ? null : chosen.file,
    dtype: chosen.dtype,
  };
}

function chooseGraph(request: LayoutRequest, graphs: readonly string[]): string {
  const { listing, genai } = request;
  // A folder of thousands of graphs would make a message of a hundred kilobytes: name the first few.
  const list = graphs.length <= 12 ? graphs.join(', ') : `${graphs.slice(0, 10).join(', ')} and ${graphs.length - 10} more`;
  const wanted = request.onnxFile ?? request.pointedFile ?? null;
  if (wanted !== null) {
    const normalized = wanted.replace(/\\/g, '/').replace(/^\.\//, '');
    const baseName = normalized.slice(normalized.lastIndexOf('/') + 1);
    const match = graphs.find((file) => file === normalized) ?? graphs.find((file) => file.slice(file.lastIndexOf('/') + 1) === baseName);
    if (match !== undefined) return match;
    throw layoutError('onnx-missing', `${listing.folder} has no graph "${wanted}". Its graphs: ${list}.`, `Pick one of: ${list}.`);
  }
  if (genai !== null) {
    const file = genai.decoder.filename.replace(/\\/g, '/').replace(/^\.\//, '');
    if (graphs.includes(file)) return file;
    throw layoutError('onnx-missing', `${genai.sourceName} names the decoder graph "${genai.decoder.filename}", which is not in ${listing.folder} (its graphs: ${list}).`,
      `Download ${genai.decoder.filename} (and its .data file) into the folder, or fix "filename" under model.decoder.`);
  }
  const preferred = graphs.find((file) => file === 'onnx/model.onnx' || file === 'model.onnx');
  if (preferred !== undefined) return preferred;
  const transformersJs = readTransformersJsConfig(request.configJson);
  if (transformersJs?.dtype != null) {
    const variant = graphs.find((file) => file === variantFile('onnx', 'model', transformersJs.dtype) || file === variantFile('', 'model', transformersJs.dtype));
    if (variant !== undefined) return variant;
  }
  for (const base of ['decoder_model_merged', 'decoder_model']) {
    const legacy = graphs.find((file) => file === variantFile('onnx', base, null) || file === variantFile('', base, null));
    if (legacy !== undefined) return legacy;
  }
  if (graphs.length === 1) return graphs[0]!;
  throw layoutError('onnx-missing', `${listing.folder} has several graphs and no model.onnx: ${list}.`, `Choose one of them as the ONNX file (kvscope: --onnx FILE; the workbench: open the file itself): ${list}.`);
}

function layoutKind(chosen: GraphFileName, genai: GenaiConfig | null, pair: string | null, configJson: ConfigObject | null): LayoutKind {
  if (genai !== null && chosen.file === genai.decoder.filename.replace(/^\.\//, '')) return 'ort-genai';
  if (chosen.role === 'decoder-merged') return 'optimum-merged';
  if (pair !== null) return 'optimum-split';
  if (chosen.role === 'model' && (chosen.dtype !== null || readTransformersJsConfig(configJson) !== null)) return 'transformers.js';
  if (chosen.role === 'model' || chosen.role === 'decoder-with-past' || chosen.role === 'decoder') return 'optimum';
  return 'single-graph';
}

/**
 * A split pipeline (onnxruntime-genai's `decoder.pipeline`: embeddings, transformer, lm_head graphs)
 * is chained by onnxruntime-genai itself; kvscope feeds one decoder graph (ids in, logits and the
 * KV presents out) and cannot chain graphs, so no "filename" would make this folder run.
 */
function pipelineRefusal(genai: GenaiConfig, listing: FolderListing): ModelLoadError {
  const stages = genai.decoder.pipeline!.map((stage) => `${stage.name}: ${stage.filename ?? '(no filename)'}`).join(', ');
  return layoutError('layout-pipeline',
    `${genai.sourceName} declares a split pipeline of ${genai.decoder.pipeline!.length} graphs (${stages}), which onnxruntime-genai chains itself. ` +
    `kvscope runs one decoder graph (token ids in, logits and every layer's KV cache out), so it cannot run the model in ${listing.folder}.`,
    'Export the model as a single decoder graph and open that folder: onnxruntime-genai\'s model builder without the exclude_embeds / exclude_lm_head extra options, ' +
    'or optimum-cli export onnx --task text-generation-with-past.');
}

function layoutError(code: 'config-missing' | 'onnx-missing' | 'layout-pipeline', message: string, fix: string): ModelLoadError {
  return new ModelLoadError(message, { fix, diagnostics: [modelError(code, message, fix)] });
}
