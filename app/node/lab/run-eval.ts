import { performance } from 'node:perf_hooks';
import { planRunCache } from '../../engine/plan-run-cache.js';
import { TokenizerError } from '../../engine/engine-errors.js';
import { DEFAULT_DEQUANTIZE_PATH, type DequantizePath, type RunSettings } from '../../engine/types.js';
import { computeReference, evaluateCache, type EvalHooks, type EvalModel, type EvalOutcome, type EvalProgress } from '../../lab/evaluate.js';
import { IN_GRAPH_TARGETS_REASON } from '../../lab/eval-lane.js';
import { isAllTargets } from '../../lab/lab-targets.js';
import { GenerationError } from '../../engine/engine-errors.js';
import type { RunCachePlan } from '../../engine/plan-run-cache.js';
import { freeArrayBuffer } from '../free-array-buffer.js';
import { openInGraphModel, type InGraphOpenedModel } from '../model/open-in-graph-model.js';
import type { ReferenceSource } from '../../lab/reference-source.js';
import type { FeedMode } from '../../lab/chunk-plan.js';
import type { KvDtype } from '../../tensor/kv-tensor.js';
import { activeExtensions, type EvalResult } from '../../lab/eval-result.js';
import type { EvalSettings } from '../../lab/eval-settings.js';
import { planWindows } from '../../lab/windows.js';
import { useHqqHelperThread } from '../hqq-helper-thread.js';
import { sha256Text } from '../model/file-digest.js';
import { openModelSession, readModelFiles, type ModelFiles } from '../model/open-model.js';
import { ensureExecutionProvider, ortVersion } from '../ort/execution-providers.js';
import { resolveModelPath } from '../run-generation.js';
import { modelContentHash } from './model-content-hash.js';
import { referenceKey } from './reference-key.js';
import { ReferenceStore } from './reference-store.js';

export interface RunEvalOptions {
  readonly isCancelled?: () => boolean;
  readonly onProgress?: (progress: EvalProgress) => void;
  /** at most this many ORT intra-op threads (sweeps with --jobs split the cores); default: kvscope's choice */
  readonly intraOpNumThreads?: number;
  /** where references are cached (default ~/.cache/kvscope/eval-references) */
  readonly referenceStore?: ReferenceStore;
  /** keep per-token columns in the result */
  readonly perToken?: boolean;
}

/**
 * One evaluation on this machine: resolve and read the model, tokenize the text and cut the windows,
 * refuse what the preflight refuses (at the prefill length, before loading the graph), open the
 * session, take the reference from the cache or compute and store it, then score the cache.
 */
export async function runEval(settings: EvalSettings, options: RunEvalOptions = {}): Promise<EvalResult> {
  return withPreparedEval(settings, options, async (prepared) => {
    const { model, windows, cachePlan, hooks } = prepared;
    // On the graph path the source graph's session has done its part (the reference): it goes before
    // the rewritten graph's opens, so the weights are held once (issue 23, point 1).
    const path = await openEvalPath(prepared.files, settings, cachePlan, options, () => model.dispose());
    let outcome: EvalOutcome;
    const evalStart = performance.now();
    try {
      // The graph path scores the rewritten graph's session; the reference stays the source graph's (full precision).
      const evaluated: EvalModel = path.opened === undefined ? model : {
        session: path.opened.session, io: model.io, config: model.config, inGraph: { kv: path.opened.inGraph.kv, releaseBuffer: freeArrayBuffer },
      };
      outcome = await evaluateCache(evaluated, settings, cachePlan, windows, prepared.reference, hooks);
    } finally {
      await path.opened?.dispose();
    }
    const evalMs = performance.now() - evalStart;
    const { text: _content, ...rest } = settings;
    return {
      settings: { ...rest, text: { name: settings.text.name } },
      model: { ...model.identity, contentSha256: prepared.modelSha256 },
      text: { name: settings.text.name, sha256: prepared.textSha256, characters: settings.text.content.length, tokens: prepared.textTokens },
      windows: { ...settings.windows, count: windows.length },
      executionProvider: model.session.executionProvider,
      ortVersion: ortVersion(),
      reference: { key: prepared.key, cached: prepared.cached },
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
 * Where the evaluated cache is dequantized, as `kvscope run` decides it (run-generation.ts): the
 * default and an explicit `graph` open the rewritten graph; where the rewrite cannot express the
 * settings, the layout or the lab's targets, an explicit `graph` is refused with the reason and the
 * default runs `host` and records why.
 */
async function openEvalPath(
  files: ModelFiles, settings: EvalSettings, cachePlan: RunCachePlan, options: RunEvalOptions, releaseSource: () => Promise<void>,
): Promise<EvalPath> {
  if (cachePlan.plan === null) return { dequantize: undefined, opened: undefined, reason: undefined };
  const wanted = settings.dequantize ?? DEFAULT_DEQUANTIZE_PATH;
  if (wanted === 'host') return { dequantize: 'host', opened: undefined, reason: undefined };
  const opened = isAllTargets(settings.targets)
    ? await openInGraphModel(files, { executionProvider: settings.executionProvider, quantization: settings.quantization, reference: false }, cachePlan.plan, {
      beforeSession: releaseSource, ...(options.intraOpNumThreads === undefined ? {} : { maxIntraOpThreads: options.intraOpNumThreads }),
    })
    : { reason: IN_GRAPH_TARGETS_REASON };
  if (!('reason' in opened)) return { dequantize: 'graph', opened, reason: undefined };
  if (settings.dequantize === 'graph') {
    throw new GenerationError(`--dequantize graph cannot evaluate these settings: ${opened.reason}.`,
      'Evaluate with --dequantize host (the same logits, dequantized in JavaScript), or change the settings.');
  }
  return { dequantize: 'host', opened: undefined, reason: opened.reason };
}

/** Makes sure the reference of these settings' model, text and windows is stored (a sweep does this once, first). */
export async function ensureReference(settings: EvalSettings, options: RunEvalOptions = {}): Promise<{ key: string; cached: boolean; ms: number }> {
  return withPreparedEval({ ...settings, cacheMode: 'dynamic' }, options, async (prepared) => ({ key: prepared.key, cached: prepared.cached, ms: prepared.referenceMs }));
}

interface PreparedEval {
  readonly files: ModelFiles;
  readonly model: Awaited<ReturnType<typeof openModelSession>>;
  readonly windows: ReturnType<typeof planWindows>;
  readonly cachePlan: ReturnType<typeof planRunCache>;
  readonly hooks: EvalHooks;
  readonly reference: ReferenceSource;
  readonly key: string;
  readonly cached: boolean;
  readonly modelSha256: string;
  readonly textSha256: string;
  readonly textTokens: number;
  readonly loadMs: number;
  readonly referenceMs: number;
}

async function withPreparedEval<T>(settings: EvalSettings, options: RunEvalOptions, use: (prepared: PreparedEval) => Promise<T>): Promise<T> {
  const started = performance.now();
  ensureExecutionProvider(settings.executionProvider);
  const folder = await resolveModelPath(settings.model);
  const files = await readModelFiles(folder, settings.onnxFile);
  const content = await modelContentHash(files);
  const textSha256 = sha256Text(settings.text.content);
  const textTokens = encodeOnce(files, content.sha256, textSha256, settings.text.content);
  const windows = planWindows(textTokens, files.specialTokens.bosTokenId, settings.windows);
  // Refuse what the preflight refuses before loading the graph (seconds for a large model).
  const cachePlan = planRunCache(files.config, asRunSettings(settings), settings.windows.prefill);
  // HQQ's optimizer takes the second core when the session has it to itself (not in a --jobs sweep).
  if (settings.cacheMode === 'quantized' && settings.quantization.backend === 'hqq' && options.intraOpNumThreads === undefined) useHqqHelperThread();
  const model = await openModelSession(files, settings.executionProvider, options.intraOpNumThreads === undefined ? {} : { maxIntraOpThreads: options.intraOpNumThreads });
  try {
    const loadMs = performance.now() - started;
    const feedMode = resolveFeedMode(settings.feed, model.io.kvDtype);
    const hooks: EvalHooks = {
      now: () => performance.now(), feedMode,
      ...(options.isCancelled === undefined ? {} : { isCancelled: options.isCancelled }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    };
    const key = referenceKey({
      modelSha256: content.sha256, textSha256, windows: settings.windows, windowCount: windows.length,
      executionProvider: model.session.executionProvider, ortVersion: ortVersion(), feedMode,
    });
    const store = options.referenceStore ?? new ReferenceStore();
    const referenceStart = performance.now();
    let reference = store.open(key);
    const cached = reference !== null;
    if (reference === null) reference = store.save(key, await computeReference(model, windows, hooks));
    const referenceMs = performance.now() - referenceStart;
    return await use({
      files, model, windows, cachePlan, hooks, reference, key, cached, modelSha256: content.sha256, textSha256,
      textTokens: textTokens.length, loadMs, referenceMs,
    });
  } finally {
    await model.dispose();
  }
}

/** The last text's tokens (a sweep's worker evaluates one text with one tokenizer, point after point). */
let lastEncoding: { readonly key: string; readonly tokens: number[] } | null = null;

function encodeOnce(files: ModelFiles, modelSha256: string, textSha256: string, text: string): number[] {
  const tokenizer = files.tokenizer;
  if (tokenizer === null) {
    throw new TokenizerError('this model folder has no tokenizer.json, so the evaluation text cannot be encoded.',
      'Copy tokenizer.json (and tokenizer_config.json) from the model\'s repository into the folder.');
  }
  const key = `${modelSha256}:${textSha256}`;
  if (lastEncoding?.key !== key) lastEncoding = { key, tokens: tokenizer.encode(text) };
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

/** The fields of a run that plan its cache (planRunCache reads the mode and the quantization only). */
function asRunSettings(settings: EvalSettings): RunSettings {
  return {
    model: settings.model, executionProvider: settings.executionProvider, cacheMode: settings.cacheMode, quantization: settings.quantization,
    prompt: '', maxNewTokens: 1, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false,
  };
}
