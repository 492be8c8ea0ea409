import { activeExtensions, type ActiveExtension } from '../../app/cache/active-extensions.js';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import type { RunSettings } from '../../app/engine/types.js';
import { modelName } from '../../app/record/run-summary.js';
import type { RunRecord } from '../../app/record/run-record.js';
import type { ChartIdentity } from '../export/chart-png.js';
import type { LiveRunState } from '../store/run-slice.js';
import { pathWords, ranPath, type PathLabel } from './dequantize-path.js';

/** `quanto 4-bit · axes 0/0 · g64 · R128 · all layers · cpu` */
export function describeSettings(settings: RunSettings): string {
  const ep = settings.executionProvider;
  if (settings.cacheMode === 'dynamic') return `dynamic cache (full precision) · ${ep}`;
  const q = settings.quantization;
  const policy = q.layerPolicy === 'all' ? 'all layers' : 'full-attention layers only';
  return `${String(q.backend)} ${q.nbits}-bit · axes ${q.axisKey}/${q.axisValue} · group ${q.groupSize} · residual ${q.residualLength} · ${policy} · ${ep}`;
}

export function describeSampling(settings: RunSettings): string {
  const s = settings.sampling;
  return s.greedy ? 'greedy' : `temperature ${s.temperature}, top-k ${s.topK}, top-p ${s.topP}, seed ${s.seed}`;
}

export const STOP_REASON_LABEL: Readonly<Record<GenerationResult['stopReason'], string>> = {
  eos: 'stopped at end of sequence',
  'max-new-tokens': 'reached max new tokens',
  cancelled: 'cancelled',
};

export function runStatusLabel(run: Pick<LiveRunState, 'status' | 'result' | 'error'>): string {
  switch (run.status) {
    case 'idle': return 'Idle';
    case 'starting': return 'Starting…';
    case 'running': return 'Generating…';
    case 'cancelling': return 'Stopping…';
    case 'done': return run.result?.stopReason === 'cancelled' ? 'Cancelled' : 'Done';
    case 'error': return run.error?.code === 'refused' ? 'Refused' : 'Failed';
  }
}

/**
 * The kvscope extensions a run used (app/cache/active-extensions.ts): none for a dynamic cache. A
 * record carries its own list; a live run's comes from its settings and the model's layer count.
 */
export function runExtensions(settings: RunSettings, numLayers?: number): ActiveExtension[] {
  return settings.cacheMode === 'quantized' ? activeExtensions(settings.quantization, numLayers) : [];
}

export function recordExtensions(record: RunRecord): readonly ActiveExtension[] {
  return record.extensions ?? runExtensions(record.settings, record.model.numLayers || undefined);
}

/**
 * A run's settings in one line for figures: cache, kvscope extensions (named as such), sampling,
 * prompt format and budget, reference lane.
 */
export function describeRunLine(settings: RunSettings, extensions: readonly ActiveExtension[] = runExtensions(settings), path: PathLabel | null = null): string {
  const dequantized = path !== null ? ` · ${pathWords(path)}` : '';
  const padded = settings.padPromptTo !== undefined ? ` · prompt left-padded to ${settings.padPromptTo}` : '';
  const beyond = extensions.length > 0 ? ` · kvscope extensions: ${extensions.map((item) => item.label).join(', ')}` : '';
  return `${describeSettings(settings)}${beyond}${dequantized} · ${describeSampling(settings)}${settings.promptFormat === 'chat' ? ' · chat turn' : ''}${padded} · ${settings.maxNewTokens} new tokens${settings.reference ? ' · reference lane' : ''}`;
}

/**
 * The prompt as the run encoded it: the text (or the ids fed as they are), its format, and the
 * left padding when asked for, so a figure or a table says exactly what the model read.
 */
export function describePrompt(settings: RunSettings): string {
  const text = settings.promptTokenIds !== undefined ? `token ids [${settings.promptTokenIds.join(', ')}]` : JSON.stringify(settings.prompt);
  const format = settings.promptFormat === 'chat' ? ' as a chat turn' : '';
  const padded = settings.padPromptTo !== undefined ? `, left-padded to ${settings.padPromptTo} tokens` : ', no padding';
  return `${text}${format}${padded}`;
}

/** What a saved run's exported charts say they show. */
export function recordIdentity(record: RunRecord): ChartIdentity {
  return { runId: record.id, model: `${modelName(record)} (${record.model.onnxFile})`, settings: describeRunLine(record.settings, recordExtensions(record), ranPath(record)) };
}
