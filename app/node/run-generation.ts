import { performance } from 'node:perf_hooks';
import { generate } from '../engine/generate.js';
import { planRunCache } from '../engine/plan-run-cache.js';
import type { GenerationObserver } from '../engine/generation-observer.js';
import type { GenerationResult } from '../engine/generation-result.js';
import { chooseDequantizePath } from '../engine/dequantize-path.js';
import type { InGraphRun } from '../engine/in-graph-run.js';
import { modelInfo, modelWarning, type ModelDiagnostic } from '../engine/model-diagnostic.js';
import { ensureInPlaceModel, ensureLogitsRowsModel } from './onnx/in-graph-model.js';
import type { RunCachePlan } from '../engine/plan-run-cache.js';
import type { DequantizePath, ExecutionProviderName, ProcessMemory, RunSettings } from '../engine/types.js';
import type { WarmTarget } from '../protocol/messages.js';
import { freeArrayBuffer } from './free-array-buffer.js';
import { ModelFilesCache } from './model/model-files-cache.js';
import { openInGraphModel } from './model/open-in-graph-model.js';
import { openModelSession, type ModelFiles, type OpenedModel } from './model/open-model.js';
import { encodeRunPrompt } from './model/run-prompt.js';
import { checkPrefillMemory, type PrefillModelFacts } from '../engine/prefill-memory.js';
import { promptTooLong } from '../engine/prompt-length.js';
import { probePromptLength, runPromptLimit } from './model/prompt-probe.js';
import { availableMemoryBytes } from './available-memory.js';
import { ensureExecutionProvider, ortVersion } from './ort/execution-providers.js';
import { useHqqHelperThread } from './hqq-helper-thread.js';
import { sessionCompute } from './session-compute.js';
import { SYNTHETIC_MODEL_KINDS, type SyntheticModelKind } from '../synthetic/synthetic-spec.js';

export type { GenerationObserver } from '../engine/generation-observer.js';
export type { GenerationResult } from '../engine/generation-result.js';

/** How a run opens its graph, beyond its settings (tests and benches). */
export interface RunGenerationOptions {
  /**
   * Run the folder's graph as it is, every prompt row's logits computed, where the run would otherwise
   * derive a graph that computes the last row only (LogitsRowsSupport `derived`): the baseline the
   * derived graph is compared with, bit for bit, and whose memory the prefill guard also estimates.
   */
  readonly everyLogitsRow?: boolean;
}

/**
 * One generation run on this machine: resolve the model (a folder, or a synthetic model built on
 * demand), open it on the requested execution provider, encode the prompt, generate, and describe
 * what ran. The session is released whatever happens.
 */
export async function runGeneration(settings: RunSettings, observer: GenerationObserver = {}, options: RunGenerationOptions = {}): Promise<GenerationResult> {
  const loadStart = performance.now();
  ensureExecutionProvider(settings.executionProvider);
  const folder = await resolveModelPath(settings.model);
  const files = await modelFiles.read(folder, settings.onnxFile);
  // Before the prompt is encoded: max new tokens past the positions, and a prompt far past what the
  // run can take, are refused in the time a prefix takes, not the whole prompt (prompt-length.ts).
  const limit = runPromptLimit(files.config.geometry, settings);
  if (settings.promptTokenIds === undefined && files.tokenizer !== null) probePromptLength(files.tokenizer, settings.prompt, limit);
  const { tokenIds: promptTokenIds, paddingTokens } = encodeRunPrompt(files, settings);
  if (settings.refusePastPositions === true && limit.bound === 'positions' && promptTokenIds.length > limit.tokens) {
    throw promptTooLong(limit, { tokens: promptTokenIds.length, exact: true, characters: settings.prompt.length, ofCharacters: settings.prompt.length });
  }
  // A prompt whose prefill cannot fit in memory would bring the OOM killer onto the whole host.
  const lastRows = options.everyLogitsRow !== true && files.analysis.logitsRows.kind === 'derived';
  const prefillModel = prefillModelFacts(files, lastRows);
  checkPrefillMemory({
    numAttentionHeads: files.config.geometry.numAttentionHeads, promptTokens: promptTokenIds.length,
    availableBytes: availableMemoryBytes(), executionProvider: settings.executionProvider,
    ...(prefillModel === null ? {} : { model: prefillModel }),
  });
  // Refuse what the preflight refuses before loading the graph (seconds for a large model).
  const cachePlan = planRunCache(files.config, settings, promptTokenIds.length);
  // HQQ's flushes are the slow part of a quantized run: give its optimizer the second core (ORT's own
  // threads are idle while the cache quantizes, the two never run at once).
  if (settings.cacheMode === 'quantized' && settings.quantization.backend === 'hqq') useHqqHelperThread();
  const { model, inGraph, dequantize, pathDiagnostics, rewriteMs } = await openForPath(files, settings, cachePlan, lastRows);
  try {
    const loadMs = performance.now() - loadStart;
    const outcome = await generate({
      session: model.session,
      io: model.io,
      config: model.config,
      settings,
      promptTokenIds,
      paddingTokens,
      eosTokenIds: model.specialTokens.eosTokenIds,
      decodeText: model.tokenizer?.decode ?? idsAsText,
      now: () => performance.now(),
      sampleMemory: processMemory,
      cachePlan,
      observer,
      ...(inGraph === undefined ? {} : { inGraph }),
      releaseBuffer: freeArrayBuffer,
    });
    const diagnostics: ModelDiagnostic[] = [...model.diagnostics, ...pathDiagnostics, ...contextWarnings(model.config.geometry.maxPositionEmbeddings, promptTokenIds.length, settings.maxNewTokens)];
    return {
      ...outcome,
      settings,
      model: model.identity,
      executionProvider: model.session.executionProvider,
      ortVersion: ortVersion(),
      timings: { loadMs, ...(rewriteMs === undefined ? {} : { rewriteMs }), sessionReused: model.sessionReused, ...outcome.timings },
      diagnostics,
      ...(cachePlan.preflight === null ? {} : { preflightDiagnostics: cachePlan.preflight.diagnostics }),
      ...(dequantize === undefined ? {} : { dequantize }),
      session: sessionCompute(files, lastRows),
    };
  } finally {
    await model.dispose();
  }
}

interface OpenedForPath {
  readonly model: OpenedModel;
  readonly inGraph: InGraphRun | undefined;
  /** quantized runs: the path that runs; undefined for dynamic runs */
  readonly dequantize: DequantizePath | undefined;
  readonly pathDiagnostics: ModelDiagnostic[];
  /** the rewrite's build time (the in-graph rewrite's, or the logits-rows graph's), when this run built it (GenerationTimings.rewriteMs) */
  readonly rewriteMs?: number | undefined;
}

/**
 * Opens the model for where its cache is dequantized (the decision: app/engine/dequantize-path.ts);
 * when the default runs `host`, the result's diagnostics say why.
 */
async function openForPath(files: ModelFiles, settings: RunSettings, cachePlan: RunCachePlan, lastRows: boolean): Promise<OpenedForPath> {
  const rowsNote = logitsRowsNote(files);
  if (cachePlan.plan === null) {
    const plain = await openRunModel(files, settings.executionProvider, lastRows);
    return { ...plain, inGraph: undefined, dequantize: undefined, pathDiagnostics: rowsNote };
  }
  const choice = await chooseDequantizePath(settings.dequantize, () => openInGraphModel(files, settings, cachePlan.plan!, { logitsRows: lastRows }), 'run');
  if (choice.path === 'graph') {
    const opened = choice.opened;
    return {
      model: opened, inGraph: opened.inGraph, dequantize: 'graph', rewriteMs: opened.rewrite.builtMs ?? undefined,
      pathDiagnostics: [modelInfo('dequantize-path', 'Dequantized inside the graph, one layer at a time.'), ...rowsNote],
    };
  }
  const plain = await openRunModel(files, settings.executionProvider, lastRows);
  return {
    ...plain, inGraph: undefined, dequantize: 'host',
    pathDiagnostics: [
      ...(choice.reason === undefined ? [] : [modelInfo('dequantize-path', `Dequantized on the host (JavaScript), not in the graph: ${choice.reason}.`)]),
      ...rowsNote,
    ],
  };
}

/**
 * The folder's graph, or where it has no num_logits_to_keep but its LM head was found, the graph
 * derived from it that takes the input (keepLogitsRows, cached by content with the other derived
 * graphs, its weights read from the source in place): the prompt's prefill and every step then
 * compute one logits row, the same bits as the source's last row (logits-rows.ort.test.ts). Else,
 * where the graph keeps its weights inside its .onnx, the same graph reading them in place.
 */
async function openRunModel(files: ModelFiles, executionProvider: ExecutionProviderName, lastRows: boolean): Promise<{ readonly model: OpenedModel; readonly rewriteMs?: number }> {
  // Weights inside the .onnx: the same graph with them read in place (ensureInPlaceModel). A session of
  // the .onnx itself holds them twice once it prepacks (the parsed copy and the packed one: 187 MiB
  // against 88 MiB for the synthetic model's 91 MiB, measured); the same outputs bit for bit.
  const inPlace = !lastRows && files.analysis.embeddedWeightsBytes > 0;
  if (!lastRows && !inPlace) return { model: await openModelSession(files, executionProvider) };
  const derived = lastRows ? await ensureLogitsRowsModel(files.onnxPath, undefined, files.analysis.io?.logits) : await ensureInPlaceModel(files.onnxPath);
  const model = await openModelSession(files, executionProvider, { graphPath: derived.path, externalDataFolder: derived.externalDataFolder });
  const rebuilt = derived.rebuiltBecause === null ? [] : [modelWarning('cache-entry-rebuilt', `${derived.rebuiltBecause}; it was discarded and rebuilt (the model itself was not at fault).`)];
  const opened: OpenedModel = rebuilt.length === 0 ? model : { ...model, diagnostics: [...model.diagnostics, ...rebuilt], dispose: () => model.dispose() };
  return { model: opened, ...(derived.builtMs === null ? {} : { rewriteMs: derived.builtMs }) };
}

/** One line where the prefill computes every prompt row's logits because no last-row graph could be had (not an error: the ids are the same). */
function logitsRowsNote(files: ModelFiles): ModelDiagnostic[] {
  const support = files.analysis.logitsRows;
  if (support.kind !== 'every-row') return [];
  return [modelInfo('logits-rows', `The prefill computes every prompt row's logits (prompt tokens × vocabulary floats), not the last row only: ${support.reason}.`)];
}

/**
 * A model folder's files stay parsed between runs in one process (a warm worker runs many): the
 * tokenizer is not loaded again for every run while its files are unchanged.
 */
const modelFiles = new ModelFilesCache(2);

/**
 * Gets a model ready for its next run in this process: its files read, its tokenizer loaded, and its
 * session created and handed back to the session cache (session-cache.ts keeps it warm), exactly as a
 * run on the same settings would lease it. Returns how long that took.
 */
export async function warmModel(target: WarmTarget): Promise<number> {
  const start = performance.now();
  ensureExecutionProvider(target.executionProvider);
  const files = await modelFiles.read(await resolveModelPath(target.model), target.onnxFile);
  // The session a run leases: the derived last-row graph where the run would derive it.
  const { model } = await openRunModel(files, target.executionProvider, files.analysis.logitsRows.kind === 'derived');
  await model.dispose();
  return performance.now() - start;
}

/** A folder without a tokenizer shows the generated ids as its text: `403 407 261`. */
export function idsAsText(ids: readonly number[]): string {
  return ids.join(' ');
}

/** Graphs do not enforce max_position_embeddings (stories260k's README); past it, quality is undefined. */
function contextWarnings(maxPositions: number | null, promptLength: number, maxNewTokens: number): ModelDiagnostic[] {
  if (maxPositions === null || promptLength + maxNewTokens <= maxPositions) return [];
  return [modelWarning('prompt-too-long',
    `the prompt (${promptLength} tokens) plus up to ${maxNewTokens} new tokens can exceed max_position_embeddings = ${maxPositions}; ` +
    'the graph runs past it, but the model was not trained for those positions.',
    `Keep prompt + maxNewTokens within ${maxPositions}.`)];
}

function processMemory(): ProcessMemory {
  const usage = process.memoryUsage();
  return { rssBytes: usage.rss, externalBytes: usage.external, arrayBuffersBytes: usage.arrayBuffers };
}

/** A folder path as is; `synthetic` / `synthetic-hybrid` through the synthetic model builder. */
export async function resolveModelPath(model: string): Promise<string> {
  if (!(SYNTHETIC_MODEL_KINDS as readonly string[]).includes(model)) return model;
  // Imported on demand: most runs never build a synthetic model, so a worker does not load the builder.
  const { ensureSyntheticModel } = await import('./synthetic/ensure-synthetic-model.js');
  return ensureSyntheticModel(model as SyntheticModelKind);
}

/**
 * What the prefill holds beside the scores, from the folder's header (before the graph is loaded):
 * the weights (graph and external data on disk, plus what a CPU session holds twice), the logits rows (one where the graph takes
 * num_logits_to_keep or the run derives a graph that does: `lastRows`) and the cache's bytes per
 * token. Null where the header gave no I/O or no vocabulary.
 */
export function prefillModelFacts(files: ModelFiles, lastRows: boolean): PrefillModelFacts | null {
  const io = files.analysis.io;
  const vocabSize = files.config.geometry.vocabSize;
  if (io === null || vocabSize === null) return null;
  const { numKeyValueHeads, headDim } = files.config.geometry;
  const pick = (dim: number | string | undefined, fallback: number): number => (typeof dim === 'number' ? dim : fallback);
  const kvBytesPerToken = io.kvLayers.reduce((sum, layer) => {
    const bytes = layer.dtype === 'float16' ? 2 : 4;
    return sum + bytes * (pick(layer.keyShape[1], numKeyValueHeads) * pick(layer.keyShape[3], headDim) +
      pick(layer.valueShape[1], numKeyValueHeads) * pick(layer.valueShape[3], headDim));
  }, 0);
  // (the guard is the CPU's) a tied embedding is resident twice: the Gather's original and the head's prepacked copy
  const weightsBytes = files.analysis.externalData.totalBytes + files.analysis.weightsHeldTwiceBytes;
  return { weightsBytes, vocabSize, logitsLastRowOnly: io.logitsToKeep !== null || lastRows, kvBytesPerToken };
}
