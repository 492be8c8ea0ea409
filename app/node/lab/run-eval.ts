import { performance } from 'node:perf_hooks';
import { planRunCache } from '../../engine/plan-run-cache.js';
import { TokenizerError } from '../../engine/engine-errors.js';
import { promptIdsProblem, tokenizerIdsProblem, vocabularySize, type EncodedSubject } from '../../engine/prompt-token-ids.js';
import { EvalInputError } from '../../lab/lab-errors.js';
import { encodeTextPrefix, tokensWindowsNeed, type TextTokens } from '../../lab/text-prefix.js';
import type { DequantizePath, RunSettings } from '../../engine/types.js';
import { evaluateCache, type ChunkHead, type EvalHooks, type EvalModel, type EvalOutcome, type EvalProgress } from '../../lab/evaluate.js';
import { checkTargetLayers, IN_GRAPH_TARGETS_REASON } from '../../lab/eval-lane.js';
import { isAllTargets, targetedQuantization } from '../../lab/lab-targets.js';
import { chooseDequantizePath } from '../../engine/dequantize-path.js';
import type { RunCachePlan } from '../../engine/plan-run-cache.js';
import { freeArrayBuffer } from '../free-array-buffer.js';
import { openInGraphModel, type InGraphOpenedModel } from '../model/open-in-graph-model.js';
import { ensureInPlaceModel, ensureLogitsRowsModel, type DerivedGraph } from '../onnx/in-graph-model.js';
import type { ReferenceSource } from '../../lab/reference-source.js';
import type { ReferenceSummary } from '../../lab/lab-protocol.js';
import type { FeedMode } from '../../lab/chunk-plan.js';
import type { KvDtype } from '../../tensor/kv-tensor.js';
import { activeExtensions, type EvalResult } from '../../lab/eval-result.js';
import type { EvalSettings } from '../../lab/eval-settings.js';
import { planWindows } from '../../lab/windows.js';
import { useHqqHelperThread } from '../hqq-helper-thread.js';
import { sha256Text } from '../model/file-digest.js';
import { openModelSession, readModelFiles, type ModelFiles } from '../model/open-model.js';
import { ensureExecutionProvider, ortVersion } from '../ort/execution-providers.js';
import { sessionCompute } from '../session-compute.js';
import { resolveModelPath } from '../run-generation.js';
import { modelContentHash } from './model-content-hash.js';
import { referenceKey } from './reference-key.js';
import { moreOfTextFile } from './text-file-prefix.js';
import { ReferenceStore, type ReferenceEntry } from './reference-store.js';
import { withReferenceLock } from './reference-lock.js';
import { prepareReference, storeReferenceWindow, type CompactReference, type PreparedReference } from './stored-reference.js';
import { ensureReferenceGraphs, type ReferenceGraphs } from './reference-graphs.js';
import { headLogits } from '../../lab/model-head.js';
import { PassThroughKvLane } from '../../engine/dynamic-kv-lane.js';
import { passThroughLaneOptions } from '../../engine/run-lane.js';
import { createEvalLane } from '../../lab/eval-lane.js';

export interface RunEvalOptions {
  readonly isCancelled?: () => boolean;
  readonly onProgress?: (progress: EvalProgress) => void;
  /** at most this many ORT intra-op threads (sweeps with --jobs split the cores); default: kvscope's choice */
  readonly intraOpNumThreads?: number;
  /** where references are cached (default `$KVSCOPE_CACHE_DIR/eval-references`, else ~/.cache/kvscope/eval-references) */
  readonly referenceStore?: ReferenceStore;
  /** keep per-token columns in the result */
  readonly perToken?: boolean;
  /**
   * how new reference windows are stored: `compact` (default: hidden states, the logits recomputed by
   * the LM head and proven bit-identical) or `logits` (float32 logits, as before; tests and benches compare the two)
   */
  readonly referenceForm?: 'compact' | 'logits';
  /**
   * run the folder's graph as it is, every fed row's logits computed, where eval would derive a graph
   * that computes only the rows it scores (LogitsRowsSupport `derived`); the tests compare the two
   */
  readonly everyLogitsRow?: boolean;
  /**
   * run the folder's graph itself where eval would read its embedded weights in place through a derived
   * graph (ensureInPlaceModel); the tests compare the two
   */
  readonly weightsCopied?: boolean;
  /**
   * every chunk's scored logits computed in its own run, where eval would compute them through the
   * LM head input a few rows at a time (evaluate.ts ChunkHead: the same bits, less memory); the tests compare the two
   */
  readonly chunkLogits?: boolean;
}

/**
 * One evaluation on this machine: resolve and read the model, tokenize the text and cut the windows,
 * refuse what the preflight refuses (at the prefill length, before loading the graph), open the
 * session, take the reference from the cache or compute and store it, then score the cache.
 */
export async function runEval(settings: EvalSettings, options: RunEvalOptions = {}): Promise<EvalResult> {
  // The dynamic cache (the base PPL) is the reference: one pass computes both (evaluateCache without a reference).
  const ownReference = settings.cacheMode === 'dynamic';
  return withPreparedEval(settings, { ...options, computeReference: !ownReference }, async (prepared) => {
    const { model, windows, cachePlan, hooks } = prepared;
    // On the graph path the source graph's session has done its part (the reference): it goes before
    // the rewritten graph's opens, so the weights are held once (issue 23, point 1).
    const path = await openEvalPath(prepared.files, settings, cachePlan, options, () => model.dispose(), prepared.compact === undefined ? undefined : model.io.logits, prepared.lastRows);
    const headInput = path.opened?.rewrite.headInput ?? null;
    let chunkHead: ChunkHead | undefined;
    if (path.opened !== undefined && headInput !== null) {
      // The stored reference is read on the rewritten graph now: its head is the source's, its weights the same bytes.
      const opened = path.opened;
      const onRewritten = (hidden: Float32Array): Promise<Float32Array> => headLogits(opened.session, model.io,
        createEvalLane(model.io, model.config, settings, cachePlan, () => performance.now(), { kv: opened.inGraph.kv, releaseBuffer: freeArrayBuffer }),
        headInput, hidden);
      prepared.useHead(onRewritten);
      // The evaluated chunks' scored logits too, a few rows at a time (issue 23: a 128-row chunk's were the peak).
      const sequenceHidden = opened.rewrite.sequenceHidden;
      if (sequenceHidden !== null && options.chunkLogits !== true) chunkHead = { sequenceHidden, logits: onRewritten, free: (logits) => freeArrayBuffer(logits.buffer) };
    }
    let outcome: EvalOutcome;
    const evalStart = performance.now();
    try {
      // The graph path scores the rewritten graph's session; the reference stays the source graph's (full precision).
      const evaluated: EvalModel = path.opened === undefined ? model : {
        session: path.opened.session, io: model.io, config: model.config, inGraph: { kv: path.opened.inGraph.kv, releaseBuffer: freeArrayBuffer },
        ...(chunkHead === undefined ? {} : { head: chunkHead }),
      };
      outcome = await evaluateCache(evaluated, settings, cachePlan, windows, prepared.reference, hooks, {
        ...(prepared.compact === undefined ? {} : { hiddenOutput: prepared.compact.hidden }),
        store: (index, computed) => storeReferenceWindow(prepared.entry, index, computed, prepared.compact, prepared.referenceNotes),
      });
    } finally {
      await path.opened?.dispose();
    }
    // The record's one list of notes: a chunk scored again the whole-chunk way is said there too.
    prepared.referenceNotes.push(...outcome.notes);
    const evalMs = performance.now() - evalStart;
    const { text: _content, ...rest } = settings;
    return {
      settings: { ...rest, text: { name: settings.text.name } },
      model: { ...model.identity, contentSha256: prepared.modelSha256 },
      text: {
        name: settings.text.name, sha256: prepared.textSha256, characters: settings.text.content.length, tokens: prepared.textTokens.tokens.length,
        ...(prepared.textTokens.whole ? {} : { tokenizedCharacters: prepared.textTokens.characters }),
        ...(settings.text.file === undefined ? {} : { fileBytes: settings.text.file.bytes }),
        ...(settings.text.tokenIds === undefined ? {} : { tokenIds: true }),
      },
      windows: { ...settings.windows, count: windows.length },
      executionProvider: model.session.executionProvider,
      ortVersion: ortVersion(),
      reference: {
        key: prepared.key, cached: prepared.cached, windowsComputed: prepared.windowsComputed, bytes: prepared.referenceBytes(),
        ...(prepared.referenceNotes.length === 0 ? {} : { notes: [...prepared.referenceNotes] }),
      },
      summary: outcome.summary,
      perWindow: outcome.windows,
      memory: { storedBytes: outcome.kvBytesTotal.totalBytes, bitsPerValue: outcome.bitsPerValue, total: outcome.kvBytesTotal, perLayer: outcome.kvBytes },
      flushCounts: outcome.flushCounts,
      layerErrors: outcome.layerErrors,
      extensions: activeExtensions(settings, model.config.geometry.numLayers),
      preflightDiagnostics: cachePlan.preflight?.diagnostics ?? [],
      feed: hooks.feedMode ?? 'chunked',
      ...(path.dequantize === undefined ? {} : { dequantize: path.dequantize }),
      ...(path.reason === undefined ? {} : { dequantizeReason: path.reason }),
      session: sessionCompute(prepared.files, prepared.lastRows),
      timings: {
        loadMs: prepared.loadMs, referenceMs: prepared.referenceMs, evalMs, runs: outcome.runs, tokensFed: outcome.tokensFed,
        tokensPerSecond: evalMs > 0 ? (1000 * outcome.tokensFed) / evalMs : 0,
      },
      ...(options.perToken === true ? {
        perToken: {
          nll: [...outcome.scores.nll], nllReference: [...outcome.scores.nllReference], kld: [...outcome.scores.kld],
          deltaP: [...outcome.scores.deltaP], top1: [...outcome.scores.top1],
        },
      } : {}),
    };
  });
}

interface EvalPath {
  /** quantized caches: the path that runs */
  readonly dequantize: DequantizePath | undefined;
  /** the rewritten graph's model, on the graph path */
  readonly opened: InGraphOpenedModel | undefined;
  /** why the default runs host */
  readonly reason: string | undefined;
}

/**
 * Where the evaluated cache is dequantized: the one decision `kvscope run` makes too
 * (app/engine/dequantize-path.ts), with the lab's targets as one more thing the rewrite cannot express.
 */
async function openEvalPath(
  files: ModelFiles, settings: EvalSettings, cachePlan: RunCachePlan, options: RunEvalOptions, releaseSource: () => Promise<void>,
  headLogitsName: string | undefined, lastRows: boolean,
): Promise<EvalPath> {
  if (cachePlan.plan === null) return { dequantize: undefined, opened: undefined, reason: undefined };
  const choice = await chooseDequantizePath<InGraphOpenedModel>(settings.dequantize, async () => (isAllTargets(settings.targets)
    ? openInGraphModel(files, { executionProvider: settings.executionProvider, quantization: settings.quantization, reference: false }, cachePlan.plan!, {
      beforeSession: releaseSource, ...(options.intraOpNumThreads === undefined ? {} : { maxIntraOpThreads: options.intraOpNumThreads }),
      ...(headLogitsName === undefined ? {} : { headLogits: headLogitsName }), logitsRows: lastRows,
    })
    : { reason: IN_GRAPH_TARGETS_REASON }), 'evaluate');
  return choice.path === 'graph'
    ? { dequantize: 'graph', opened: choice.opened, reason: undefined }
    : { dequantize: 'host', opened: undefined, reason: choice.reason };
}

/** Makes sure the reference of these settings' model, text and windows is stored (a sweep does this once, first). */
export async function ensureReference(settings: EvalSettings, options: RunEvalOptions = {}): Promise<ReferenceSummary> {
  return withPreparedEval({ ...settings, cacheMode: 'dynamic' }, options, async (prepared) => ({
    key: prepared.key, cached: prepared.cached, ms: prepared.referenceMs, windowsComputed: prepared.windowsComputed, bytes: prepared.referenceBytes(),
  }));
}

interface PreparedEval {
  readonly files: ModelFiles;
  /** the sessions run a graph derived to compute only the logits rows asked for (LogitsRowsSupport `derived`) */
  readonly lastRows: boolean;
  readonly model: Awaited<ReturnType<typeof openModelSession>>;
  readonly windows: ReturnType<typeof planWindows>;
  readonly cachePlan: ReturnType<typeof planRunCache>;
  readonly hooks: EvalHooks;
  /** null when the caller's own pass computes it (computeReference false, not cached) */
  readonly reference: ReferenceSource | null;
  readonly key: string;
  readonly entry: ReferenceEntry;
  /** the compact reference's graphs, where the LM head could be cut */
  readonly compact: CompactReference | undefined;
  /** the session the compact reference's logits are recomputed on from now (the rewritten graph's, once the source's is released) */
  readonly useHead: (head: (hidden: Float32Array) => Promise<Float32Array>) => void;
  readonly cached: boolean;
  readonly windowsComputed: number;
  /** windows discarded and computed again while the evaluation read them (a failed check) */
  readonly referenceNotes: string[];
  /** the stored reference's size on disk now */
  readonly referenceBytes: () => number;
  readonly modelSha256: string;
  readonly textSha256: string;
  readonly textTokens: TextTokens;
  readonly loadMs: number;
  readonly referenceMs: number;
}

async function withPreparedEval<T>(
  settings: EvalSettings, options: RunEvalOptions & { computeReference?: boolean }, use: (prepared: PreparedEval) => Promise<T>,
): Promise<T> {
  const started = performance.now();
  ensureExecutionProvider(settings.executionProvider);
  const folder = await resolveModelPath(settings.model);
  const files = await readModelFiles(folder, settings.onnxFile);
  const content = await modelContentHash(files);
  // A text read only in part (EvalText.file) is known by the whole file's sha256.
  const textSha256 = settings.text.file?.sha256 ?? sha256Text(settings.text.content);
  const textTokens = textTokensOnce(files, content.sha256, textSha256, settings);
  const windows = planWindows(textTokens.tokens, files.specialTokens.bosTokenId, settings.windows);
  // Refuse what the preflight refuses before loading the graph (seconds for a large model).
  checkTargetLayers(settings, files.config.geometry.numLayers);
  const cachePlan = planRunCache(files.config, asRunSettings(settings, files.config.geometry.numLayers), settings.windows.prefill);
  // HQQ's optimizer takes the second core when the session has it to itself (not in a --jobs sweep).
  if (settings.cacheMode === 'quantized' && settings.quantization.backend === 'hqq' && options.intraOpNumThreads === undefined) useHqqHelperThread();
  // The compact reference's graphs: the source graph with its hidden state as an added output (the
  // same logits bit for bit, so it serves the evaluation too) and its LM head; float32 logits where the head cannot be cut.
  // A graph without num_logits_to_keep whose LM head was found runs derived to take it (issue 23, point 4):
  // each run computes the logits rows eval reads (a chunk's scored rows, the reference pass's two), the
  // same bits as the source's rows (logits-rows.ort.test.ts), not every fed row.
  const lastRows = options.everyLogitsRow !== true && files.analysis.logitsRows.kind === 'derived';
  const graphs = options.referenceForm === 'logits' ? { reason: 'float32 logits were asked for' } : await compactReferenceGraphs(files, lastRows);
  const threads = options.intraOpNumThreads === undefined ? {} : { maxIntraOpThreads: options.intraOpNumThreads };
  const derived = 'reason' in graphs ? await plainEvalGraph(files, lastRows, options.weightsCopied === true) : null;
  const model = await openModelSession(files, settings.executionProvider, {
    ...threads, ...('reason' in graphs ? {} : { graphPath: graphs.modelPath, externalDataFolder: graphs.externalDataFolder, headInput: graphs.headInput }),
    ...(derived === null ? {} : { graphPath: derived.path, externalDataFolder: derived.externalDataFolder }),
  });
  try {
    const loadMs = performance.now() - started;
    const feedMode = resolveFeedMode(settings.feed, model.io.kvDtype);
    const hooks: EvalHooks = {
      now: () => performance.now(), feedMode,
      ...(options.isCancelled === undefined ? {} : { isCancelled: options.isCancelled }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    };
    const key = referenceKey({
      modelSha256: content.sha256, textSha256, windows: settings.windows,
      executionProvider: model.session.executionProvider, ortVersion: ortVersion(), feedMode,
    });
    const store = options.referenceStore ?? new ReferenceStore();
    const referenceStart = performance.now();
    const entry = store.entry(key, {
      model: { folder: files.folder.folder, onnxFile: files.layout.graph }, text: { name: settings.text.name, sha256: textSha256 },
      windows: { context: settings.windows.context, stride: settings.windows.stride, prefill: settings.windows.prefill },
      feed: feedMode, executionProvider: model.session.executionProvider,
    });
    // The LM head runs on the session that holds the weights (app/lab/model-head.ts): no second copy of the head's weight.
    let head = (hidden: Float32Array): Promise<Float32Array> => 'reason' in graphs ? Promise.reject(new RangeError('no LM head')) :
      headLogits(model.session, model.io, new PassThroughKvLane(passThroughLaneOptions(model.io, model.config)), graphs.headInput, hidden);
    const compact: CompactReference | undefined = 'reason' in graphs ? undefined : {
      hidden: graphs.hidden, headLogits: (hidden) => head(hidden), ...(graphs.sequenceHidden === null ? {} : { sequenceHidden: graphs.sequenceHidden }),
    };
    const missing = windows.filter((window) => !entry.has(window.index)).length;
    // --cache dynamic is its own reference: where windows are missing, its single pass (evaluateCache
    // without a reference) computes them and stores each as it goes.
    const ownPass = options.computeReference === false && missing > 0;
    // Computed under a lock: a shard that starts beside another waits for its windows instead.
    const prepared: PreparedReference | null = ownPass ? null : await withReferenceLock(entry.folder,
      () => prepareReference(entry, model, windows, hooks, compact),
      options.isCancelled === undefined ? {} : { isCancelled: options.isCancelled });
    const referenceMs = performance.now() - referenceStart;
    return await use({
      files, lastRows, model, windows, cachePlan, hooks, reference: prepared?.source ?? null, key, entry, compact, useHead: (next) => { head = next; },
      cached: prepared !== null && prepared.windowsComputed === 0, windowsComputed: prepared?.windowsComputed ?? missing,
      referenceNotes: prepared?.notes ?? [], referenceBytes: () => entry.bytes(), modelSha256: content.sha256, textSha256,
      textTokens, loadMs, referenceMs,
    });
  } finally {
    await model.dispose();
  }
}

/**
 * The graph eval runs where there is no compact reference graph: the logits-rows cut (LogitsRowsSupport
 * `derived`), else, where the folder's graph keeps weights inside its `.onnx`, that graph with them
 * read in place (ensureInPlaceModel: a sweep's jobs share one copy, as they share external data), else
 * the folder's graph as it is (null). A legacy pair's prefill graph stays the folder's.
 */
async function plainEvalGraph(files: ModelFiles, lastRows: boolean, weightsCopied: boolean): Promise<DerivedGraph | null> {
  if (lastRows) return ensureLogitsRowsModel(files.onnxPath, undefined, files.analysis.io?.logits);
  if (weightsCopied || files.analysis.embeddedWeightsBytes === 0) return null;
  return ensureInPlaceModel(files.onnxPath);
}

/**
 * The compact reference's graphs for this model, or why there are none: a single float32-logits graph
 * whose LM head can be cut (the legacy pair and float16 logits keep float32-logits references). The
 * graphs hold no weights of their own (reference-graphs.ts): they read the source's in place.
 */
async function compactReferenceGraphs(files: ModelFiles, lastRows: boolean): Promise<ReferenceGraphs | { readonly reason: string }> {
  const io = files.analysis.io;
  if (files.layout.prefillGraph !== null) return { reason: 'the model is a prefill/decode pair' };
  if (io === null || io.logitsType !== 'float32') return { reason: 'the graph\'s logits are not float32' };
  return ensureReferenceGraphs(files.onnxPath, io.logits, undefined, lastRows);
}

/** The last text's tokens (a sweep's worker evaluates one text with one tokenizer, point after point). */
let lastEncoding: { readonly key: string; readonly tokens: TextTokens } | null = null;

const EVAL_TEXT: EncodedSubject = { subject: 'the text', idsInstead: 'kvscope eval --text-ids FILE, a file of ids separated by commas or whitespace' };

/**
 * The text's tokens the windows need, checked against the graph's vocabulary before any session
 * runs (the check `run` makes, prompt-token-ids.ts): `--text-ids` as given, else the tokenizer's
 * encoding of the prefix the windows cover (text-prefix.ts; the whole text without --windows).
 */
function textTokensOnce(files: ModelFiles, modelSha256: string, textSha256: string, settings: EvalSettings): TextTokens {
  const text = settings.text;
  const vocab = vocabularySize(files.analysis.io?.logitsShape, files.config.geometry.vocabSize);
  if (text.tokenIds !== undefined) {
    const problem = promptIdsProblem(text.tokenIds, vocab, `--text-ids ${text.name} ids`);
    if (problem !== null) throw new EvalInputError(problem.message, problem.fix);
    return { tokens: [...text.tokenIds], characters: text.content.length, whole: true };
  }
  const tokenizer = files.tokenizer;
  if (tokenizer === null) {
    throw new TokenizerError('this model folder has no tokenizer.json, so the evaluation text cannot be encoded.',
      'Give the text as token ids (kvscope eval --text-ids FILE), or copy tokenizer.json (and tokenizer_config.json) from the model\'s repository into the folder.');
  }
  const needed = tokensWindowsNeed(settings.windows);
  const key = `${modelSha256}:${textSha256}:${needed ?? 'all'}`;
  if (lastEncoding?.key !== key) lastEncoding = { key, tokens: encodeTextPrefix(text.content, needed, (part) => tokenizer.encode(part), text.file === undefined ? undefined : moreOfTextFile(text.file)) };
  const problem = tokenizerIdsProblem(lastEncoding.tokens.tokens, vocab, EVAL_TEXT);
  if (problem !== null) throw new TokenizerError(problem.message, problem.fix);
  return lastEncoding.tokens;
}

/**
 * `auto`: chunks for float32 KV, token by token for float16 KV. An fp16-KV graph that computes in
 * float32 (stories260k's model_fp16.onnx) rounds each token's K/V to binary16 only in `present`, so
 * a token fed in the same run as an earlier one attends to that one's unrounded K/V, where generation,
 * which feeds it back as past, rounds it: measured on stories260k, HQQ 8-bit, that moves the mean KLD
 * by 3%. Token by token is what `run` does, so it is the only exact choice there.
 */
export function resolveFeedMode(feed: EvalSettings['feed'], kvDtype: KvDtype | null): FeedMode {
  if (feed !== undefined && feed !== 'auto') return feed;
  return kvDtype === 'float16' ? 'token-by-token' : 'chunked';
}

/** The fields of a run that plan its cache (planRunCache reads the mode and the quantization only, the lab's targets resolved into it). */
function asRunSettings(settings: EvalSettings, numLayers: number): RunSettings {
  const quantization = settings.cacheMode === 'dynamic' ? settings.quantization : targetedQuantization(settings, numLayers);
  return {
    model: settings.model, executionProvider: settings.executionProvider, cacheMode: settings.cacheMode, quantization,
    prompt: '', maxNewTokens: 1, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false,
  };
}
