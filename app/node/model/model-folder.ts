import { existsSync, lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { ModelLoadError } from '../../engine/engine-errors.js';
import { modelError } from '../../engine/model-diagnostic.js';
import { parseGraphFileName } from '../../model-layout/graph-files.js';
import type { FolderListing } from '../../model-layout/model-layout.js';
import { graphFiles } from '../../model-layout/resolve-layout.js';

/** One graph file of a model folder, as the UI lists it. */
export interface OnnxVariant {
  /** relative to the folder, `/`-separated: `onnx/model_fp16.onnx` */
  readonly file: string;
  /** the file name without `.onnx`: `model_fp16` */
  readonly name: string;
  /**
   * the transformers.js dtype its name's suffix says (`fp16`, `q4f16`, `q8` for `_quantized`, …), or
   * null; what the graph really computes in is read from its tensor types (graph-precision.ts)
   */
  readonly dtype: string | null;
  /** the graph file plus the external data files named after it */
  readonly bytes: number;
  /** external data files beside it named after it (`model.onnx_data`, `model.onnx_data_1`, `model.onnx.data`), relative */
  readonly externalData: readonly string[];
}

/** A model folder: Hugging Face / Optimum, transformers.js, ONNX Runtime GenAI, or a lone .onnx beside a config. */
export interface ModelFolder {
  readonly folder: string;
  /** config.json, null when the folder has only genai_config.json */
  readonly configPath: string | null;
  /** genai_config.json (ONNX Runtime GenAI folders), or null */
  readonly genaiConfigPath: string | null;
  readonly generationConfigPath: string | null;
  readonly tokenizerPath: string | null;
  readonly tokenizerConfigPath: string | null;
  /** `chat_template.jinja`, where newer exports keep the chat template instead of tokenizer_config.json */
  readonly chatTemplatePath: string | null;
  /** every .onnx under `onnx/` and at the top level, `onnx/model.onnx` first */
  readonly variants: readonly OnnxVariant[];
  /** set when the path given was a .onnx file: that file, relative */
  readonly pointedFile: string | null;
  /** the files at the root and under onnx/, for the layout resolver */
  readonly listing: FolderListing;
}

const CONFIG_FILES = ['config.json', 'genai_config.json'];

/**
 * Finds the model files under `path` (a folder, or a .onnx file inside one). Throws ModelLoadError
 * with a fix when the folder is missing, has no config (config.json or genai_config.json), or holds
 * no graph at all. Which graph and which config a run uses is the layout's choice (read-model-layout.ts).
 */
export function findModelFolder(path: string): ModelFolder {
  const absolute = resolve(path);
  if (!existsSync(absolute)) {
    throw folderError('model-folder-missing', `the model path ${absolute} does not exist.`,
      'Give the folder of an ONNX model (with config.json or genai_config.json and its .onnx graph), or synthetic.');
  }
  let folder = absolute;
  let pointedFile: string | null = null;
  if (statOrUndefined(absolute)?.isFile() === true) {
    if (!absolute.endsWith('.onnx')) {
      throw folderError('model-folder-missing', `${absolute} is a file but not an .onnx graph.`,
        'Give the model folder (the one with config.json or genai_config.json), or its .onnx file.');
    }
    folder = dirname(absolute);
    // onnx/model.onnx: the config sits one level up.
    if (basename(folder) === 'onnx' && !CONFIG_FILES.some((file) => existsSync(join(folder, file)))) folder = dirname(folder);
    pointedFile = toPosix(relative(folder, absolute));
  }
  // Any entry of the name counts (a FIFO or a device too): the guarded reader then says what it is,
  // where skipping it would report a missing file.
  // lstat: a link that loops is there too, and the reader says so, where existsSync would call the file missing.
  const optional = (file: string): string | null => (lstatSync(join(folder, file), { throwIfNoEntry: false }) !== undefined ? join(folder, file) : null);
  const configPath = optional('config.json');
  const genaiConfigPath = optional('genai_config.json');
  if (configPath === null && genaiConfigPath === null) {
    throw folderError('config-missing',
      `${folder} has neither config.json nor genai_config.json. kvscope reads the model's layers, KV heads and head_dim from one of them to plan the cache.`,
      'Put the config.json of the model (from its Hugging Face repository) in this folder, beside onnx/, or the genai_config.json of its ONNX Runtime GenAI export.');
  }
  const listing = listFolder(folder);
  const variants = listVariants(listing);
  if (variants.length === 0) {
    throw folderError('onnx-missing', `${folder} has a ${configPath !== null ? 'config.json' : 'genai_config.json'} but no .onnx graph (looked in ${join(folder, 'onnx')} and the folder itself).`,
      'Download the ONNX export (onnx/model.onnx, or a variant such as model_fp16.onnx) into the folder.');
  }
  return {
    folder,
    configPath,
    genaiConfigPath,
    generationConfigPath: optional('generation_config.json'),
    tokenizerPath: optional('tokenizer.json'),
    tokenizerConfigPath: optional('tokenizer_config.json'),
    chatTemplatePath: optional('chat_template.jinja'),
    variants,
    pointedFile,
    listing,
  };
}

/** The regular files at the folder's root and under `onnx/`, with their sizes. */
function listFolder(folder: string): FolderListing {
  const files: { path: string; bytes: number }[] = [];
  for (const directory of [folder, join(folder, 'onnx')]) {
    if (statOrUndefined(directory)?.isDirectory() !== true) continue;
    for (const entry of readdirSync(directory).sort()) {
      const path = join(directory, entry);
      const stats = statOrUndefined(path);
      if (stats?.isFile() !== true) continue;
      files.push({ path: toPosix(relative(folder, path)), bytes: stats.size });
    }
  }
  return { folder, files };
}

/**
 * An entry's stats, following links; undefined for one that cannot be a model file: gone, a dangling
 * link, or a loop of links anywhere in the folder (statSync's raw ELOOP would end the whole open).
 */
function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

function listVariants(listing: FolderListing): OnnxVariant[] {
  const sizes = new Map(listing.files.map((file) => [file.path, file.bytes]));
  const dataFiles = dataFilesByGraph(listing);
  return graphFiles(listing).map((file) => {
    // data files named after the graph; the graph's header says which it really references (external-data.ts)
    const externalData = dataFiles.get(file) ?? [];
    const parsed = parseGraphFileName(file);
    return {
      file,
      name: parsed.stem,
      dtype: parsed.dtype,
      bytes: sizes.get(file)! + externalData.reduce((sum, other) => sum + sizes.get(other)!, 0),
      externalData,
    };
  });
}

/**
 * Files named `<graph>.onnx_data…` or `<graph>.onnx.data…`, by the graph they are named after, in
 * listing order: one pass, where comparing every graph with every file took seconds on a folder of
 * 10,000 graphs.
 */
function dataFilesByGraph(listing: FolderListing): Map<string, string[]> {
  const byGraph = new Map<string, string[]>();
  for (const { path } of listing.files) {
    for (const marker of ['.onnx_data', '.onnx.data']) {
      for (let at = path.indexOf(marker); at >= 0; at = path.indexOf(marker, at + 1)) {
        const graph = path.slice(0, at + '.onnx'.length);
        if (graph === path) continue;
        const list = byGraph.get(graph) ?? [];
        if (!list.includes(path)) list.push(path);
        byGraph.set(graph, list);
      }
    }
  }
  return byGraph;
}

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

function folderError(code: 'model-folder-missing' | 'config-missing' | 'onnx-missing', message: string, fix: string): ModelLoadError {
  return new ModelLoadError(message, { fix, diagnostics: [modelError(code, message, fix)] });
}
