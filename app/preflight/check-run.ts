import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { flushState } from '../accounting/flush-state.js';
import type { ModelConfig } from '../config/model-config.js';
import { inGraphSettingsReason } from '../engine/in-graph-run.js';
import type { CacheMode, DequantizePath } from '../engine/types.js';
import { flushPeriod } from './check-cache-arguments.js';
import type { Diagnostic } from './diagnostic.js';
import { layerUsesRuntimeFormat, usesRuntimeFormat } from '../cache/cache-extensions.js';
import { firstFailingQuantizeInRun, type QuantizeFailure } from './first-failing-quantize.js';
import { nearestWorkingSettings, type RunFix } from './nearest-settings.js';
import { runPreflight, type PreflightResult } from './run-preflight.js';

export type { RunFix } from './nearest-settings.js';

/** What one run is asked to do, as far as its verdict goes (RunSettings has these fields). */
export interface RunPlanInput {
  readonly cacheMode: CacheMode;
  readonly quantization: QuantizedCacheSettings;
  readonly maxNewTokens: number;
  /** quantized runs: an explicit `graph` is refused here when the graph path cannot express the settings */
  readonly dequantize?: DequantizePath;
}

/** Why a run cannot start, as the run panel shows it next to the disabled Run button. */
export interface RunRefusal {
  /** transformers' or the backend's exact text first where there is one, then kvscope's explanation */
  readonly message: string;
  readonly fix?: string;
}

/** The verdict on one run before it starts: the real lengths, the preflight, what stops it and what would not. */
export interface RunCheck {
  readonly ok: boolean;
  /** the prompt as the run encodes it (BOS, chat template and padding included) */
  readonly promptTokens: number;
  readonly maxNewTokens: number;
  /** prompt + max new tokens: the longest context the run can reach */
  readonly contextTokens: number;
  /** config.json's max_position_embeddings (null when absent) */
  readonly maxPositions: number | null;
  /** residual flushes the run makes if it generates all its tokens (0 for a dynamic cache) */
  readonly flushes: number;
  /** the quantized cache's preflight on the real prompt length; null for a dynamic cache */
  readonly preflight: PreflightResult | null;
  /** the first quantize call the backend refuses within this run (prefill, or a flush at a decode step) */
  readonly failure: QuantizeFailure | null;
  /** null when the run can start */
  readonly refusal: RunRefusal | null;
  /** what is worth knowing but stops nothing (positions past max_position_embeddings) */
  readonly notes: readonly string[];
  /** when refused: the nearest settings that run, one click each (never applied silently) */
  readonly fixes: readonly RunFix[];
  /** milliseconds the host spent on it (tokenizing included), when a host measured it */
  readonly elapsedMs?: number;
}

/**
 * The run panel's verdict, computed on every edit from the real prompt length (the host tokenizes):
 * the preflight exactly as a run applies it (app/engine/plan-run-cache.ts refuses what it refuses),
 * plus the flushes the run will actually reach. transformers builds the cache and fails only at the
 * first quantize call that does not split into groups; a flush failure at decode step k is that
 * failure, k steps later, so it refuses the run here already when k is within max new tokens.
 */
export function checkRun(config: ModelConfig, run: RunPlanInput, promptTokens: number): RunCheck {
  const maxPositions = config.geometry.maxPositionEmbeddings;
  const contextTokens = promptTokens + Math.max(0, run.maxNewTokens);
  const notes = positionNotes(promptTokens, run.maxNewTokens, maxPositions);
  const base = { promptTokens, maxNewTokens: run.maxNewTokens, contextTokens, maxPositions, notes };
  if (!Number.isInteger(run.maxNewTokens) || run.maxNewTokens < 1) {
    return {
      ...base, ok: false, flushes: 0, preflight: null, failure: null, fixes: [],
      refusal: { message: `Max new tokens must be a whole number of at least 1; it is ${run.maxNewTokens}.`, fix: 'Ask for at least 1 new token.' },
    };
  }
  if (promptTokens < 1) {
    return {
      ...base, ok: false, flushes: 0, preflight: null, failure: null, fixes: [],
      refusal: { message: 'The prompt encodes to no tokens and the model defines no BOS token to start from.', fix: 'Type a prompt, or add bos_token_id to generation_config.json.' },
    };
  }
  if (run.cacheMode === 'dynamic') return { ...base, ok: true, flushes: 0, preflight: null, failure: null, refusal: null, fixes: [] };

  const preflight = runPreflight(config, run.quantization, { sequenceLengths: [promptTokens] });
  const decodeSteps = run.maxNewTokens - 1;
  // A runtime's write-once format (--kv-format, or the layer map's in its layers) has no backend quantize call and no flush to fail.
  const backendLayers = quantizedLayers(preflight).filter((layer) => !layerUsesRuntimeFormat(run.quantization, layer));
  const writeOnce = backendLayers.length === 0 && usesRuntimeFormat(run.quantization);
  const failure = writeOnce ? null : firstFailingQuantizeInRun(config.geometry, run.quantization, promptTokens, decodeSteps, 1, backendLayers);
  const period = writeOnce ? null : flushPeriod(run.quantization.residualLength);
  // closed form: the step-by-step schedule built a row per decode step (a million at a 1M-token what-if)
  const flushes = period === null ? 0 : flushState(promptTokens, run.quantization.residualLength, decodeSteps).flushes;
  const firstError = preflight.diagnostics.find((d) => d.severity === 'error');
  const refusal = firstError !== undefined ? refusalOf(firstError) : failure !== null ? flushRefusal(failure, run.maxNewTokens) : graphRefusal(config, run, preflight);
  return {
    ...base,
    notes: flushes === 0 && refusal === null ? [...notes, noFlushNote(run, promptTokens)] : notes,
    ok: refusal === null,
    flushes,
    preflight,
    failure,
    refusal,
    fixes: refusal === null ? [] : nearestWorkingSettings(config, run, promptTokens, (settings, prompt, maxNewTokens) => runs(config, settings, prompt, maxNewTokens)),
  };
}

/**
 * An explicit `--dequantize graph` the graph path cannot honour, refused before Run with the reason
 * and the words the engine throws at run start (app/node/run-generation.ts openForPath); the same
 * decision (inGraphSettingsReason) gives both. The default (no choice) runs host and says why instead.
 */
function graphRefusal(config: ModelConfig, run: RunPlanInput, preflight: PreflightResult): RunRefusal | null {
  if (run.dequantize !== 'graph') return null;
  const reason = inGraphSettingsReason(run.quantization, quantizedLayers(preflight), config.geometry.numLayers);
  if (reason === null) return null;
  return {
    message: `--dequantize graph cannot run these settings: ${reason}.`,
    fix: 'Choose "in the graph where the settings allow" (it runs on the host and says why) or "on the host", or change the settings.',
  };
}

/**
 * transformers quantizes the prompt at the prefill and keeps new tokens in the full-precision residual
 * until it holds `residual_length`; a run that ends first measures no flush at all, and its generated
 * tokens are never quantized. Said before Run, since the defaults (residual 128, 128 new tokens) do it.
 */
function noFlushNote(run: RunPlanInput, promptTokens: number): string {
  const residual = run.quantization.residualLength;
  const decodeTokens = run.maxNewTokens - 1;
  return `This run never flushes: the residual holds ${residual} tokens and the run adds only ${decodeTokens} after the prefill, ` +
    `so the prompt's ${promptTokens} tokens are quantized once and every generated token stays in full precision. ` +
    `To measure flushes, ${decodeTokens >= 1 ? `lower the residual length to ${decodeTokens} or less, or ` : ''}ask for ${residual + 1} new tokens or more.`;
}

/** Whether these settings pass the preflight and every quantize call of the run. */
function runs(config: ModelConfig, settings: QuantizedCacheSettings, promptTokens: number, maxNewTokens: number): boolean {
  const preflight = runPreflight(config, settings, { sequenceLengths: [promptTokens] });
  if (preflight.diagnostics.some((d) => d.severity === 'error')) return false;
  return firstFailingQuantizeInRun(config.geometry, settings, promptTokens, maxNewTokens - 1, 1, quantizedLayers(preflight).filter((layer) => !layerUsesRuntimeFormat(settings, layer))) === null;
}

function quantizedLayers(preflight: PreflightResult): number[] {
  return preflight.layers.filter((layer) => layer.quantized).map((layer) => layer.index);
}

function refusalOf(diagnostic: Diagnostic): RunRefusal {
  return { message: diagnostic.message, ...(diagnostic.fix !== undefined ? { fix: diagnostic.fix } : {}) };
}

function flushRefusal(failure: QuantizeFailure, maxNewTokens: number): RunRefusal {
  return {
    message: `${failure.failure.text} kvscope: the prompt passes the prefill, but the flush at decode step ${failure.step} re-quantizes ` +
      `${failure.seq} tokens of the ${failure.tensors} (${failure.failure.detail}), and this run reaches step ${failure.step} ` +
      `(max new tokens ${maxNewTokens}): it would fail there.`,
    fix: `Choose settings that divide every flush, or ask for at most ${failure.step} new tokens.`,
  };
}

function positionNotes(promptTokens: number, maxNewTokens: number, maxPositions: number | null): string[] {
  if (maxPositions === null) return [];
  if (promptTokens > maxPositions) {
    return [`The prompt alone (${promptTokens} tokens) is longer than max_position_embeddings = ${maxPositions}: the graph runs past it, but the model was not trained for those positions.`];
  }
  if (promptTokens + maxNewTokens > maxPositions) {
    return [`The prompt (${promptTokens} tokens) plus up to ${maxNewTokens} new tokens can reach ${promptTokens + maxNewTokens} positions, past max_position_embeddings = ${maxPositions}; ` +
      `stay within ${maxPositions - promptTokens} new tokens to keep to the positions the model was trained for.`];
  }
  return [];
}

/** The verdict when the run cannot even be sized: the model folder or the prompt is unusable. */
export function refusedRunCheck(maxNewTokens: number, refusal: RunRefusal): RunCheck {
  return {
    ok: false, promptTokens: 0, maxNewTokens, contextTokens: 0, maxPositions: null, flushes: 0,
    preflight: null, failure: null, refusal, notes: [], fixes: [],
  };
}
