import { availableParallelism } from 'node:os';
import { withHeadInputDefault, type HeadInput } from '../../lab/model-head.js';
import { join } from 'node:path';
import type { ModelConfig } from '../../config/model-config.js';
import type { DecoderIo } from '../../engine/decoder-io.js';
import type { DecoderSession } from '../../engine/decoder-session.js';
import { ModelLoadError, ModelRefusedError } from '../../engine/engine-errors.js';
import type { ModelIdentity } from '../../engine/generation-result.js';
import { modelError, modelWarning, type ModelDiagnostic } from '../../engine/model-diagnostic.js';
import { readSpecialTokens, type SpecialTokens } from '../../engine/special-tokens.js';
import type { ExecutionProviderName } from '../../engine/types.js';
import { jsonSyntaxProblem } from '../../json-syntax.js';
import { readGuardedTextSync } from '../files/guarded-read.js';
import { analyzeLayoutGraph, type LayoutGraphAnalysis } from '../../model-layout/analyze-layout-graph.js';
import { checkLayoutGraph, type LayoutGraphContext } from '../../model-layout/check-layout-graph.js';
import type { ModelLayout } from '../../model-layout/model-layout.js';
import { PrefillSplitSession } from '../../model-layout/prefill-split-session.js';
import { intraOpThreadsFor } from '../ort/intra-op-threads.js';
import { leaseDecoderSessions } from '../ort/session-cache.js';
import { sha256File, sha256Text } from './file-digest.js';
import { loadTokenizer, type ModelTokenizer } from './load-tokenizer.js';
import { findModelFolder, type ModelFolder } from './model-folder.js';
import { readLayoutHeaders, readModelLayout, type ModelLayoutFiles } from './read-model-layout.js';

/** A model ready to generate: session, checked I/O, config, tokenizer, special tokens, identity. */
export interface OpenedModel {
  readonly folder: ModelFolder;
  readonly layout: ModelLayout;
  readonly config: ModelConfig;
  readonly session: DecoderSession;
  readonly io: DecoderIo;
  /** null for a folder without tokenizer.json (runs then take prompt ids, and show ids as text) */
  readonly tokenizer: ModelTokenizer | null;
  readonly specialTokens: SpecialTokens;
  readonly identity: ModelIdentity;
  /** warnings and notes of the checks (errors were thrown) */
  readonly diagnostics: readonly ModelDiagnostic[];
  /** whether the session came warm from app/node/ort/session-cache.ts (false: created for this run) */
  readonly sessionReused: boolean;
  /** hands the session back (app/node/ort/session-cache.ts keeps recent ones warm for the next runs) */
  dispose(): Promise<void>;
}

/** A model folder's files, read and checked, before any session exists (cheap: no weight is read). */
export interface ModelFiles {
  readonly folder: ModelFolder;
  readonly layoutFiles: ModelLayoutFiles;
  readonly layout: ModelLayout;
  readonly config: ModelConfig;
  readonly configBytes: Uint8Array;
  /** the graph of the decode steps, absolute */
  readonly onnxPath: string;
  readonly tokenizer: ModelTokenizer | null;
  readonly specialTokens: SpecialTokens;
  /** the graph's header analysis: I/O under the layout's names, precision, external data */
  readonly analysis: LayoutGraphAnalysis;
  /** warnings and notes so far */
  readonly diagnostics: readonly ModelDiagnostic[];
}

/**
 * Reads a model folder for a run: folder layout, config (config.json or genai_config.json),
 * generation_config.json, the tokenizer when there is one, and the graph's header, whose I/O is
 * checked against the config before any session exists. Throws ModelLoadError / TokenizerError /
 * ConfigError with a fix for files that cannot be used, ModelRefusedError for a graph kvscope cannot drive.
 */
export async function readModelFiles(path: string, onnxFile?: string): Promise<ModelFiles> {
  const folder = findModelFolder(path);
  const layoutFiles = readModelLayout(folder, onnxFile);
  const { layout, config } = layoutFiles;
  const specialTokens = readSpecialTokens(readOptionalJson(folder.generationConfigPath), [config.text, config.root]);
  const tokenizer = folder.tokenizerPath === null ? null : loadTokenizer(folder);
  const headers = await readLayoutHeaders(folder, layout);
  const analysis = analyzeLayoutGraph(headers, folder.listing, graphContext(layoutFiles));
  const diagnostics = [...layoutFiles.diagnostics, ...analysis.diagnostics];
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.some((d) => d.code === 'onnx-external-data-missing')) {
    throw ModelLoadError.fromDiagnostics(`${layout.graph} cannot be loaded:`, errors);
  }
  if (errors.length > 0) throw new ModelRefusedError(`${layout.graph} and ${config.sourceName} cannot be used together:`, diagnostics);
  return {
    folder, layoutFiles, layout, config, configBytes: layoutFiles.configBytes, onnxPath: join(folder.folder, layout.graph), tokenizer, specialTokens, analysis, diagnostics,
  };
}

/** What the layout check needs besides the graph: the layout, the config, genai and transformers.js configs. */
export function graphContext(files: ModelLayoutFiles): LayoutGraphContext {
  return { layout: files.layout, config: files.config, genai: files.configs.genai?.config ?? null, transformersJs: files.configs.transformersJs };
}

/**
 * Creates the session(s) for files read by `readModelFiles` and checks the graph's I/O again on the
 * session's metadata. `maxIntraOpThreads` caps kvscope's choice of ORT threads (a lab sweep with
 * --jobs splits the cores between its sessions); below the cap the session is the same as without it.
 */
export async function openModelSession(
  files: ModelFiles, executionProvider: ExecutionProviderName,
  // graphPath: a derived graph to run instead of the folder's (same inputs, same logits, outputs added: the eval reference's hidden state)
  // externalDataFolder: where that derived graph reads its weights (the source's folder: it holds none itself)
  // headInput: that graph's input of extra hidden rows for its LM head, fed zero rows unless a caller feeds it (app/lab/model-head.ts)
  options: { maxIntraOpThreads?: number; graphPath?: string; externalDataFolder?: string; headInput?: HeadInput } = {},
): Promise<OpenedModel> {
  const { folder, layout, config, configBytes, tokenizer, specialTokens } = files;
  const intraOpNumThreads = cappedThreads(intraOpThreadsFor(executionProvider, config.geometry.hiddenSize), options.maxIntraOpThreads);
  const graphs = [...(layout.prefillGraph === null ? [] : [layout.prefillGraph]), layout.graph];
  const sessionPath = (file: string): string => (file === layout.graph && options.graphPath !== undefined ? options.graphPath : join(folder.folder, file));
  const lease = await leaseDecoderSessions(graphs.map((file) => ({ path: sessionPath(file), displayName: file })), {
    executionProvider, ...(intraOpNumThreads === undefined ? {} : { intraOpNumThreads }),
    ...(options.graphPath === undefined || options.externalDataFolder === undefined ? {} : { externalDataFolder: options.externalDataFolder }),
    // what the session(s) hold: the graph and its external data (a legacy pair: about twice that)
    residentBytes: files.analysis.externalData.totalBytes * graphs.length,
  });
  try {
    const leased = lease.sessions[lease.sessions.length - 1]!;
    const decode = options.graphPath === undefined || options.headInput === undefined ? leased : withHeadInputDefault(leased, options.headInput);
    const prefill = lease.sessions.length > 1 ? lease.sessions[0]! : null;
    // The session's own metadata is the last word (the header was tested equal to it).
    const check = checkLayoutGraph({ graph: decode, prefill }, graphContext(files.layoutFiles));
    const io = check.io;
    if (io === null) throw new ModelRefusedError(`${layout.graph} and ${config.sourceName} cannot be used together:`, check.diagnostics);
    const session = prefill === null ? decode : new PrefillSplitSession(prefill, decode, io.kvLayers[0]?.pastKey ?? '');
    const diagnostics = [...files.diagnostics];
    if (specialTokens.eosTokenIds.length === 0) {
      diagnostics.push(modelWarning('generation-config-invalid',
        'Neither generation_config.json nor the config names an eos_token_id: runs stop only at maxNewTokens.',
        'Add "eos_token_id" to generation_config.json.'));
    }
    const digests = await Promise.all(graphs.map((file) => sha256File(join(folder.folder, file))));
    const identity: ModelIdentity = {
      folder: folder.folder,
      onnxFile: graphs.join(' + '),
      // one graph: its sha256; the legacy pair: the sha256 of the two digests, prefill first
      onnxSha256: digests.length === 1 ? digests[0]! : sha256Text(digests.join('')),
      configSha256: sha256Text(configBytes),
      modelType: config.modelType ?? null,
      numLayers: config.geometry.numLayers,
      kvDtype: io.kvDtype ?? 'float32',
      layerKinds: [...config.layers.actualKinds],
    };
    // The pair's session releases both; a single session is the lease's own.
    return { folder, layout, config, session, io, tokenizer, specialTokens, identity, diagnostics, sessionReused: lease.reused, dispose: () => lease.release() };
  } catch (error) {
    await lease.release();
    throw error;
  }
}

/** ORT's default is one thread per core: a cap below this machine's cores sets the count, one above it changes nothing. */
export function cappedThreads(chosen: number | undefined, cap: number | undefined): number | undefined {
  if (cap === undefined) return chosen;
  if (chosen !== undefined) return Math.min(chosen, cap);
  return cap < availableParallelism() ? cap : undefined;
}

function readOptionalJson(path: string | null): unknown {
  if (path === null) return null;
  const text = readGuardedTextSync(path, 'generation-config');
  try {
    return JSON.parse(text);
  } catch (error) {
    const fix = 'Fix the JSON, or delete generation_config.json to fall back to the model config.';
    const message = `${path} is not valid JSON${jsonSyntaxProblem(error, text)}.`;
    throw new ModelLoadError(message, { fix, diagnostics: [modelError('generation-config-invalid', message, fix)] });
  }
}
