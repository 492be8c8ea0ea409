import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join } from 'node:path';
import type { ModelConfig } from '../../config/model-config.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { checkDecoderIo } from '../../engine/check-decoder-io.js';
import { readDecoderIo, type DecoderIo } from '../../engine/decoder-io.js';
import type { DecoderSession, ValueInfo } from '../../engine/decoder-session.js';
import { ModelLoadError } from '../../engine/engine-errors.js';
import type { ModelIdentity } from '../../engine/generation-result.js';
import { modelError, modelWarning, type ModelDiagnostic } from '../../engine/model-diagnostic.js';
import { readSpecialTokens, type SpecialTokens } from '../../engine/special-tokens.js';
import type { ExecutionProviderName } from '../../engine/types.js';
import { intraOpThreadsFor } from '../ort/intra-op-threads.js';
import { leaseDecoderSession } from '../ort/session-cache.js';
import { sha256File, sha256Text } from './file-digest.js';
import { loadTokenizer, type ModelTokenizer } from './load-tokenizer.js';
import { chooseVariant, findModelFolder, type ModelFolder, type OnnxVariant } from './model-folder.js';

/** A model ready to generate: session, checked I/O, config, tokenizer, special tokens, identity. */
export interface OpenedModel {
  readonly folder: ModelFolder;
  readonly variant: OnnxVariant;
  readonly config: ModelConfig;
  readonly session: DecoderSession;
  readonly io: DecoderIo;
  readonly tokenizer: ModelTokenizer;
  readonly specialTokens: SpecialTokens;
  readonly identity: ModelIdentity;
  /** warnings and notes of the checks (errors were thrown) */
  readonly diagnostics: readonly ModelDiagnostic[];
  /** hands the session back (app/node/ort/session-cache.ts keeps the last one warm for the next run) */
  dispose(): Promise<void>;
}

/** A model folder's files, read and checked, before any session exists (cheap: no graph is loaded). */
export interface ModelFiles {
  readonly folder: ModelFolder;
  readonly variant: OnnxVariant;
  readonly onnxPath: string;
  readonly config: ModelConfig;
  readonly configBytes: Uint8Array;
  readonly tokenizer: ModelTokenizer;
  readonly specialTokens: SpecialTokens;
}

/**
 * Reads a model folder for a run: folder layout, graph choice, config.json, generation_config.json and
 * the tokenizer. Throws ModelLoadError / TokenizerError / ConfigError with a fix.
 */
export function readModelFiles(path: string, onnxFile?: string): ModelFiles {
  const folder = findModelFolder(path);
  const variant = chooseVariant(folder, onnxFile);
  const configBytes = readFileSync(folder.configPath);
  const config = parseModelConfig(configBytes.toString('utf8'), `${basename(folder.folder)}/config.json`);
  const specialTokens = readSpecialTokens(readOptionalJson(folder.generationConfigPath), [config.text, config.root]);
  const tokenizer = loadTokenizer(folder);
  const onnxPath = join(folder.folder, variant.file);
  checkNotLfsPointer(onnxPath, variant.file);
  return { folder, variant, onnxPath, config, configBytes, tokenizer, specialTokens };
}

/**
 * Creates the session for files read by `readModelFiles` and checks the graph against config.json.
 * `maxIntraOpThreads` caps kvscope's choice of ORT threads (a lab sweep with --jobs splits the cores
 * between its sessions); below the cap the session is the same as without it.
 */
export async function openModelSession(files: ModelFiles, executionProvider: ExecutionProviderName, options: { maxIntraOpThreads?: number } = {}): Promise<OpenedModel> {
  const { folder, variant, onnxPath, config, configBytes, tokenizer, specialTokens } = files;
  const intraOpNumThreads = cappedThreads(intraOpThreadsFor(executionProvider, config.geometry.hiddenSize), options.maxIntraOpThreads);
  const lease = await leaseDecoderSession(onnxPath, {
    executionProvider, displayName: variant.file, ...(intraOpNumThreads === undefined ? {} : { intraOpNumThreads }),
  });
  const session = lease.session;
  try {
    const { io, diagnostics } = checkGraph(session.inputs, session.outputs, config, variant.file);
    if (io === null || diagnostics.some((d) => d.severity === 'error')) {
      throw ModelLoadError.fromDiagnostics(`${variant.file} and ${config.sourceName} cannot be used together:`, diagnostics);
    }
    if (specialTokens.eosTokenIds.length === 0) {
      diagnostics.push(modelWarning('generation-config-invalid',
        'Neither generation_config.json nor config.json names an eos_token_id: runs stop only at maxNewTokens.',
        'Add "eos_token_id" to generation_config.json.'));
    }
    const identity: ModelIdentity = {
      folder: folder.folder,
      onnxFile: variant.file,
      onnxSha256: await sha256File(onnxPath),
      configSha256: sha256Text(configBytes),
      modelType: config.modelType ?? null,
      numLayers: config.geometry.numLayers,
      kvDtype: io.kvDtype ?? 'float32',
    };
    return { folder, variant, config, session, io, tokenizer, specialTokens, identity, diagnostics, dispose: () => lease.release() };
  } catch (error) {
    await lease.release();
    throw error;
  }
}

/** ORT's default is one thread per core: a cap below this machine's cores sets the count, one above it changes nothing. */
function cappedThreads(chosen: number | undefined, cap: number | undefined): number | undefined {
  if (cap === undefined) return chosen;
  if (chosen !== undefined) return Math.min(chosen, cap);
  return cap < availableParallelism() ? cap : undefined;
}

/** The graph's I/O read and cross-checked against config.json (app/engine/check-decoder-io.ts). */
export function checkGraph(
  inputs: readonly ValueInfo[], outputs: readonly ValueInfo[], config: ModelConfig, graphName: string,
): { io: DecoderIo | null; diagnostics: ModelDiagnostic[] } {
  const reading = readDecoderIo(inputs, outputs, graphName);
  const diagnostics = [...reading.diagnostics];
  if (reading.io !== null) diagnostics.push(...checkDecoderIo(reading.io, config, graphName));
  return { io: reading.io, diagnostics };
}

function readOptionalJson(path: string | null): unknown {
  if (path === null) return null;
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    const fix = 'Fix the JSON, or delete generation_config.json to fall back to config.json.';
    const message = `${path} is not valid JSON: ${error instanceof Error ? error.message : String(error)}.`;
    throw new ModelLoadError(message, { fix, diagnostics: [modelError('generation-config-invalid', message, fix)] });
  }
}

/** A Git LFS pointer (a clone without `git lfs pull`) fails in ORT as a protobuf error; say what it is. */
function checkNotLfsPointer(path: string, name: string): void {
  const head = Buffer.alloc(64);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  if (!head.toString('latin1').startsWith('version https://git-lfs')) return;
  const fix = 'Run `git lfs pull` in the model repository (or download the file directly).';
  const message = `${name} is a Git LFS pointer, not the model itself.`;
  throw new ModelLoadError(message, { fix, diagnostics: [modelError('onnx-unreadable', message, fix)] });
}
