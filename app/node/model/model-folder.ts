import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { ModelLoadError } from '../../engine/engine-errors.js';
import { modelError } from '../../engine/model-diagnostic.js';

/** One graph file of a model folder, as the UI lists it. */
export interface OnnxVariant {
  /** relative to the folder, `/`-separated: `onnx/model_fp16.onnx` */
  readonly file: string;
  /** the file name without `.onnx`: `model_fp16` */
  readonly name: string;
  /** what the onnx-community suffix means: fp32, fp16, q4, q4f16, int8, uint8, bnb4, quantized (int8), … */
  readonly precision: string;
  /** the graph file plus its external data files */
  readonly bytes: number;
  /** external data files beside it (`model.onnx_data`, `model.onnx_data_1`, `model.onnx.data`), relative */
  readonly externalData: readonly string[];
}

/** A model folder in the Hugging Face ONNX layout (or a lone .onnx beside a config.json). */
export interface ModelFolder {
  readonly folder: string;
  readonly configPath: string;
  readonly generationConfigPath: string | null;
  readonly tokenizerPath: string | null;
  readonly tokenizerConfigPath: string | null;
  /** `chat_template.jinja`, where newer exports keep the chat template instead of tokenizer_config.json */
  readonly chatTemplatePath: string | null;
  /** every .onnx under `onnx/` and at the top level, `onnx/model.onnx` first */
  readonly variants: readonly OnnxVariant[];
  /** set when the path given was a .onnx file: that file, relative */
  readonly pointedFile: string | null;
}

/** onnx-community / Optimum file-name suffixes (transformers.js `dtype` names). */
const PRECISION_SUFFIXES: readonly (readonly [string, string])[] = [
  ['_q4f16', 'q4f16'], ['_fp16', 'fp16'], ['_q4', 'q4'], ['_int8', 'int8'], ['_uint8', 'uint8'],
  ['_bnb4', 'bnb4'], ['_quantized', 'quantized (int8)'], ['_q8', 'q8'], ['_fp32', 'fp32'],
];

/**
 * Finds the model files under `path` (a folder, or a .onnx file inside one). Throws ModelLoadError
 * with a fix when the folder or its config.json is missing or when it holds no graph at all.
 */
export function findModelFolder(path: string): ModelFolder {
  const absolute = resolve(path);
  if (!existsSync(absolute)) {
    throw folderError('model-folder-missing', `the model path ${absolute} does not exist.`,
      'Give the folder of a Hugging Face ONNX model (with config.json and onnx/model.onnx), or synthetic.');
  }
  let folder = absolute;
  let pointedFile: string | null = null;
  if (statSync(absolute).isFile()) {
    if (!absolute.endsWith('.onnx')) {
      throw folderError('model-folder-missing', `${absolute} is a file but not an .onnx graph.`,
        'Give the model folder (the one with config.json), or its .onnx file.');
    }
    folder = dirname(absolute);
    // onnx/model.onnx: the config sits one level up.
    if (basename(folder) === 'onnx' && !existsSync(join(folder, 'config.json'))) folder = dirname(folder);
    pointedFile = toPosix(relative(folder, absolute));
  }
  const configPath = join(folder, 'config.json');
  if (!existsSync(configPath)) {
    throw folderError('config-missing',
      `${folder} has no config.json. kvscope reads the model's layers, KV heads and head_dim from it to plan the cache.`,
      'Put the config.json of the model (from its Hugging Face repository) in this folder, beside onnx/.');
  }
  const variants = listVariants(folder);
  if (variants.length === 0) {
    throw folderError('onnx-missing', `${folder} has a config.json but no .onnx graph (looked in ${join(folder, 'onnx')} and the folder itself).`,
      'Download the ONNX export (onnx/model.onnx, or a variant such as model_fp16.onnx) into the folder.');
  }
  const optional = (file: string): string | null => (existsSync(join(folder, file)) ? join(folder, file) : null);
  return {
    folder,
    configPath,
    generationConfigPath: optional('generation_config.json'),
    tokenizerPath: optional('tokenizer.json'),
    tokenizerConfigPath: optional('tokenizer_config.json'),
    chatTemplatePath: optional('chat_template.jinja'),
    variants,
    pointedFile,
  };
}

/**
 * The graph a run uses: `onnxFile` (a path relative to the folder, or just a file name), else the
 * file the path pointed at, else `onnx/model.onnx` / `model.onnx`, else the only variant.
 */
export function chooseVariant(folder: ModelFolder, onnxFile?: string): OnnxVariant {
  const wanted = onnxFile ?? folder.pointedFile;
  const list = folder.variants.map((v) => v.file).join(', ');
  if (wanted !== null && wanted !== undefined) {
    const normalized = toPosix(wanted).replace(/^\.\//, '');
    const match = folder.variants.find((v) => v.file === normalized) ?? folder.variants.find((v) => basename(v.file) === basename(normalized));
    if (match !== undefined) return match;
    throw folderError('onnx-missing', `${folder.folder} has no graph "${wanted}". Its graphs: ${list}.`, `Pick one of: ${list}.`);
  }
  const preferred = folder.variants.find((v) => v.file === 'onnx/model.onnx') ?? folder.variants.find((v) => v.file === 'model.onnx');
  if (preferred !== undefined) return preferred;
  if (folder.variants.length === 1) return folder.variants[0]!;
  throw folderError('onnx-missing', `${folder.folder} has several graphs and no model.onnx: ${list}.`, `Choose one of them as the ONNX file: ${list}.`);
}

function listVariants(folder: string): OnnxVariant[] {
  const variants: OnnxVariant[] = [];
  for (const directory of [join(folder, 'onnx'), folder]) {
    if (!existsSync(directory) || !statSync(directory).isDirectory()) continue;
    const entries = readdirSync(directory);
    for (const entry of entries.filter((name) => name.endsWith('.onnx')).sort()) {
      const path = join(directory, entry);
      if (!statSync(path).isFile()) continue;
      const externalData = entries.filter((other) => other !== entry && (other.startsWith(`${entry}_data`) || other.startsWith(`${entry}.data`)));
      const name = entry.slice(0, -'.onnx'.length);
      variants.push({
        file: toPosix(relative(folder, path)),
        name,
        precision: precisionOf(name),
        bytes: statSync(path).size + externalData.reduce((sum, other) => sum + statSync(join(directory, other)).size, 0),
        externalData: externalData.map((other) => toPosix(relative(folder, join(directory, other)))),
      });
    }
  }
  const rank = (v: OnnxVariant): number => (v.file === 'onnx/model.onnx' ? 0 : v.file === 'model.onnx' ? 1 : 2);
  return variants.sort((a, b) => rank(a) - rank(b) || a.file.localeCompare(b.file));
}

function precisionOf(name: string): string {
  for (const [suffix, precision] of PRECISION_SUFFIXES) if (name.endsWith(suffix)) return precision;
  return 'fp32';
}

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

function folderError(code: 'model-folder-missing' | 'config-missing' | 'onnx-missing', message: string, fix: string): ModelLoadError {
  return new ModelLoadError(message, { fix, diagnostics: [modelError(code, message, fix)] });
}
