import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ConfigObject } from '../../config/config-object.js';
import { describeValue, isConfigObject } from '../../config/config-object.js';
import { parseGenaiConfig, type GenaiConfig } from '../../config/genai-config.js';
import { parseJsonText } from '../../config/json-text.js';
import type { ModelConfig } from '../../config/model-config.js';
import { ConfigError } from '../../errors.js';
import { ModelLoadError } from '../../engine/engine-errors.js';
import { modelError, type ModelDiagnostic } from '../../engine/model-diagnostic.js';
import { layoutModelConfig } from '../../model-layout/layout-config.js';
import type { ModelLayout } from '../../model-layout/model-layout.js';
import { resolveLayout } from '../../model-layout/resolve-layout.js';
import { readTransformersJsConfig, type TransformersJsConfig } from '../../model-layout/transformers-js-config.js';
import { externalDataFiles, readGraphHeader, type GraphHeader } from '../../onnx/graph-header.js';
import { withFileByteSource } from '../onnx/file-byte-source.js';
import { describeFsError } from '../fs-errors.js';
import { checkReadableFileSync, readGuardedFile, readGuardedFileSync, readGuardedHeadSync } from '../files/guarded-read.js';
import type { ModelFolder } from './model-folder.js';

/** A folder's configs as read: config.json's object and genai_config.json, each null when absent. */
export interface FolderConfigs {
  readonly configJson: { readonly root: ConfigObject; readonly bytes: Uint8Array; readonly sourceName: string } | null;
  readonly genai: { readonly config: GenaiConfig; readonly bytes: Uint8Array } | null;
  readonly transformersJs: TransformersJsConfig | null;
}

/** The layout of a folder with its model config: everything a run needs to know before reading a graph. */
export interface ModelLayoutFiles {
  readonly folder: ModelFolder;
  readonly configs: FolderConfigs;
  readonly layout: ModelLayout;
  readonly config: ModelConfig;
  /** the bytes of the config the model config came from (config.json, else genai_config.json): its identity */
  readonly configBytes: Uint8Array;
  /** cross-check warnings between config.json and genai_config.json */
  readonly diagnostics: readonly ModelDiagnostic[];
}

/** The bytes of a folder's configs, each null where the folder has none. */
interface ConfigBytes {
  readonly configJson: Uint8Array | null;
  readonly genai: Uint8Array | null;
}

/**
 * Reads config.json and genai_config.json where the folder has them, through the guarded reader (a
 * FIFO or device refused at once, a size cap). Throws ConfigError on invalid JSON.
 */
export function readFolderConfigs(folder: ModelFolder): FolderConfigs {
  const read = (path: string | null): Uint8Array | null => (path === null ? null : readGuardedFileSync(path, 'config'));
  return parseFolderConfigs(folder, { configJson: read(folder.configPath), genai: read(folder.genaiConfigPath) });
}

/** The same without blocking the thread: what a host uses, so one request never holds up another. */
export async function readFolderConfigsAsync(folder: ModelFolder): Promise<FolderConfigs> {
  const read = (path: string | null): Promise<Uint8Array | null> => (path === null ? Promise.resolve(null) : readGuardedFile(path, 'config'));
  const [configJson, genai] = await Promise.all([read(folder.configPath), read(folder.genaiConfigPath)]);
  return parseFolderConfigs(folder, { configJson, genai });
}

function parseFolderConfigs(folder: ModelFolder, bytes: ConfigBytes): FolderConfigs {
  const name = basename(folder.folder);
  let configJson: FolderConfigs['configJson'] = null;
  if (bytes.configJson !== null) {
    const sourceName = `${name}/config.json`;
    const root = parseJsonText(Buffer.from(bytes.configJson).toString('utf8'), sourceName);
    if (!isConfigObject(root)) {
      throw new ConfigError(`${sourceName} should hold a JSON object (a model config) but holds ${describeValue(root)}. Point kvscope at the model's config.json.`);
    }
    configJson = { root, bytes: bytes.configJson, sourceName };
  }
  let genai: FolderConfigs['genai'] = null;
  if (bytes.genai !== null) {
    genai = { config: parseGenaiConfig(Buffer.from(bytes.genai).toString('utf8'), `${name}/genai_config.json`), bytes: bytes.genai };
  }
  return { configJson, genai, transformersJs: readTransformersJsConfig(configJson?.root ?? null) };
}

/**
 * The folder's layout (which config, which graph) and its model config. Throws ModelLoadError or
 * ConfigError with a fix when either cannot be had.
 */
export function readModelLayout(folder: ModelFolder, onnxFile?: string): ModelLayoutFiles {
  const configs = readFolderConfigs(folder);
  const layout = resolveLayout({
    listing: folder.listing, configJson: configs.configJson?.root ?? null, genai: configs.genai?.config ?? null, onnxFile, pointedFile: folder.pointedFile,
  });
  const { config, diagnostics } = layoutModelConfig(configs.configJson, configs.genai?.config ?? null);
  const configBytes = configs.configJson?.bytes ?? configs.genai!.bytes;
  return { folder, configs, layout, config, configBytes, diagnostics };
}

/** The headers of the layout's graph and its prefill graph (the legacy pair), weights never read. */
export async function readLayoutHeaders(folder: ModelFolder, layout: ModelLayout): Promise<{ graph: GraphHeader; prefill: GraphHeader | null }> {
  const graph = await readHeader(folder, layout.graph);
  const prefill = layout.prefillGraph === null ? null : await readHeader(folder, layout.prefillGraph);
  return { graph, prefill };
}

async function readHeader(folder: ModelFolder, file: string): Promise<GraphHeader> {
  const path = join(folder.folder, file);
  checkNotLfsPointer(path, file);
  checkNotEmpty(path, file);
  let header: GraphHeader;
  try {
    header = await withFileByteSource(path, (source) => readGraphHeader(source, file));
  } catch (error) {
    const isFormat = error instanceof Error && error.name === 'OnnxFormatError';
    const fix = isFormat
      ? 'Download the .onnx file again (a truncated download looks like this), check that the path names the graph itself (not its external data), or re-export the model.'
      : 'Check that the file exists and is readable.';
    const message = isFormat ? error.message : `${file} could not be read: ${describeFsError(error, path, 'read')}`;
    throw new ModelLoadError(message, { fix, diagnostics: [modelError('onnx-unreadable', message, fix)], cause: error });
  }
  checkExternalDataFiles(path, header);
  return header;
}

/**
 * onnxruntime opens the external data the graph references itself, where a FIFO would block its read
 * beyond any cancel: every referenced file that is there must be a regular file within its cap (one
 * that is absent is the layout analysis's to report, with the files the folder has instead).
 */
function checkExternalDataFiles(graphPath: string, header: GraphHeader): void {
  for (const { location } of externalDataFiles(header)) {
    const path = join(dirname(graphPath), location);
    if (!existsSync(path)) continue;
    checkReadableFileSync(path, 'onnx');
    checkNotLfsPointer(path, location, 'the weights');
  }
}

/** A Git LFS pointer (a clone without `git lfs pull`) is no protobuf and no weights: say what it is. */
function checkNotLfsPointer(path: string, name: string, what = 'the model itself'): void {
  let head: Buffer;
  try {
    // Also refuses a FIFO or a device in place of the graph before anything else opens it.
    head = readGuardedHeadSync(path, 'onnx', 64);
  } catch (error) {
    if ((error as { name?: string }).name === 'GuardedFileError') throw unreadableGraph(error as Error, name);
    return; // the header reader says what is wrong with the path
  }
  if (!head.toString('latin1').startsWith('version https://git-lfs')) return;
  const fix = 'Run `git lfs pull` in the model repository (or download the file directly).';
  const message = `${name} is a Git LFS pointer, not ${what}.`;
  throw new ModelLoadError(message, { fix, diagnostics: [modelError('onnx-unreadable', message, fix)] });
}

function unreadableGraph(error: Error & { fix?: string }, name: string): ModelLoadError {
  const fix = error.fix ?? 'Give the path of the .onnx graph itself.';
  return new ModelLoadError(error.message, { fix, diagnostics: [modelError('onnx-unreadable', `${name}: ${error.message}`, fix)], cause: error });
}

/** An empty graph is no truncated download to fetch again but a file that never got its bytes (a failed copy, a placeholder). */
function checkNotEmpty(path: string, file: string): void {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return; // the read below says why the file cannot be read
  }
  if (size > 0) return;
  const message = `${file} is empty (0 bytes): it is no ONNX graph.`;
  const fix = 'Copy or export the graph again (a failed copy or a placeholder file looks like this), or choose another .onnx file.';
  throw new ModelLoadError(message, { fix, diagnostics: [modelError('onnx-unreadable', message, fix)] });
}
