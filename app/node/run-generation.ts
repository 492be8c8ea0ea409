import { performance } from 'node:perf_hooks';
import { generate } from '../engine/generate.js';
import { planRunCache } from '../engine/plan-run-cache.js';
import type { GenerationObserver } from '../engine/generation-observer.js';
import type { GenerationResult } from '../engine/generation-result.js';
import { modelWarning, type ModelDiagnostic } from '../engine/model-diagnostic.js';
import type { ProcessMemory, RunSettings } from '../engine/types.js';
import { GenerationError, TokenizerError } from '../engine/engine-errors.js';
import { checkPrefillMemory } from '../engine/prefill-memory.js';
import { availableMemoryBytes } from './available-memory.js';
import { encodePrompt, type ModelTokenizer } from './model/load-tokenizer.js';
import { openModelSession, readModelFiles } from './model/open-model.js';
import { ensureExecutionProvider, ortVersion } from './ort/execution-providers.js';
import { useHqqHelperThread } from './hqq-helper-thread.js';
import { SYNTHETIC_MODEL_KINDS, type SyntheticModelKind } from '../synthetic/synthetic-spec.js';

export type { GenerationObserver } from '../engine/generation-observer.js';
export type { GenerationResult } from '../engine/generation-result.js';

/**
 * One generation run on this machine: resolve the model (a folder, or a synthetic model built on
 * demand), open it on the requested execution provider, encode the prompt, generate, and describe
 * what ran. The session is released whatever happens.
 */
export async function runGeneration(settings: RunSettings, observer: GenerationObserver = {}): Promise<GenerationResult> {
  const loadStart = performance.now();
  ensureExecutionProvider(settings.executionProvider);
  const folder = await resolveModelPath(settings.model);
  const files = await readModelFiles(folder, settings.onnxFile);
  const promptTokenIds = promptIdsFor(settings, files.tokenizer, files.specialTokens.bosTokenId, files.analysis.io?.logitsShape);
  // A prompt whose prefill cannot fit in memory would bring the OOM killer onto the whole host.
  checkPrefillMemory({
    numAttentionHeads: files.config.geometry.numAttentionHeads, promptTokens: promptTokenIds.length,
    availableBytes: availableMemoryBytes(), executionProvider: settings.executionProvider,
  });
  // Refuse what the preflight refuses before loading the graph (seconds for a large model).
  const cachePlan = planRunCache(files.config, settings, promptTokenIds.length);
  // HQQ's flushes are the slow part of a quantized run: give its optimizer the second core (ORT's own
  // threads are idle while the cache quantizes, the two never run at once).
  if (settings.cacheMode === 'quantized' && settings.quantization.backend === 'hqq') useHqqHelperThread();
  const model = await openModelSession(files, settings.executionProvider);
  try {
    const loadMs = performance.now() - loadStart;
    const outcome = await generate({
      session: model.session,
      io: model.io,
      config: model.config,
      settings,
      promptTokenIds,
      eosTokenIds: model.specialTokens.eosTokenIds,
      decodeText: model.tokenizer?.decode ?? idsAsText,
      now: () => performance.now(),
      sampleMemory: processMemory,
      cachePlan,
      observer,
    });
    const diagnostics: ModelDiagnostic[] = [...model.diagnostics, ...contextWarnings(model.config.geometry.maxPositionEmbeddings, promptTokenIds.length, settings.maxNewTokens)];
    return {
      ...outcome,
      settings,
      model: model.identity,
      executionProvider: model.session.executionProvider,
      ortVersion: ortVersion(),
      timings: { loadMs, ...outcome.timings },
      diagnostics,
      ...(cachePlan.preflight === null ? {} : { preflightDiagnostics: cachePlan.preflight.diagnostics }),
    };
  } finally {
    await model.dispose();
  }
}

/**
 * The prompt's ids: `promptTokenIds` as given (checked against the graph's vocabulary), else the
 * prompt encoded by the model's tokenizer; a folder without tokenizer.json needs the former.
 */
function promptIdsFor(settings: RunSettings, tokenizer: ModelTokenizer | null, bosTokenId: number | null, logitsShape: readonly (number | string)[] | undefined): number[] {
  const vocab = logitsShape?.[logitsShape.length - 1];
  const lastId = typeof vocab === 'number' ? vocab - 1 : null;
  if (settings.promptTokenIds !== undefined) {
    const outside = settings.promptTokenIds.filter((id) => !Number.isInteger(id) || id < 0 || (lastId !== null && id > lastId));
    if (outside.length > 0 || settings.promptTokenIds.length === 0) {
      throw new GenerationError(
        settings.promptTokenIds.length === 0 ? 'the prompt ids are empty.' : `prompt ids ${outside.slice(0, 5).join(', ')} are not token ids of this model (its logits have ${String(vocab)} entries).`,
        `Give at least one id, each from 0 to ${lastId ?? 'the vocabulary size - 1'}.`);
    }
    return [...settings.promptTokenIds];
  }
  if (tokenizer === null) {
    throw new TokenizerError('this model folder has no tokenizer.json, so the prompt cannot be encoded.',
      'Give the prompt as token ids (kvscope run --prompt-ids 1,2,3), or copy tokenizer.json from the model\'s repository into the folder.');
  }
  const ids = encodePrompt(tokenizer, settings.prompt, bosTokenId, settings.promptFormat);
  const outside = lastId === null ? [] : ids.filter((id) => id > lastId);
  if (outside.length > 0) {
    // onnxruntime would fail inside the embedding lookup ("input index out of range"): say why here.
    throw new TokenizerError(
      `the tokenizer encodes the prompt to ids the graph does not have (${outside.slice(0, 5).join(', ')}; the graph's logits have ${String(vocab)} entries): ` +
      'the tokenizer and the graph do not belong together (test exports with a cut vocabulary are like this).',
      `Give the prompt as token ids from 0 to ${lastId} (kvscope run --prompt-ids 1,2,3), or use the tokenizer exported with the graph.`);
  }
  return ids;
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
