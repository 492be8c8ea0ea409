import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { ModelConfig } from '../config/model-config.js';
import type { CacheMode } from '../engine/types.js';
import { backendRules } from '../quant/backend-rules.js';
import { CANDIDATE_GROUP_SIZES } from './quantize-lengths.js';

/**
 * One setting change that makes a refused run start, offered as one click. Only the named fields
 * change; transformers' defaults stay the defaults (the run panel never applies one by itself).
 */
export interface RunFix {
  readonly kind: 'group-size' | 'axis' | 'residual-length' | 'pad-prompt' | 'max-new-tokens';
  /** a button's text, e.g. `Use q_group_size 32` */
  readonly label: string;
  /** why it runs, with the numbers */
  readonly detail: string;
  /** fields of QuantizedCacheSettings to change */
  readonly quantization?: Partial<QuantizedCacheSettings>;
  /** left-pad the prompt to this many tokens (transformers' `padding_side="left"`) */
  readonly padPromptTo?: number;
  readonly maxNewTokens?: number;
}

/** Whether a quantized run with these settings, this prompt length and this budget would start and finish. */
export type RunsPredicate = (settings: QuantizedCacheSettings, promptTokens: number, maxNewTokens: number) => boolean;

interface RunAsked {
  readonly cacheMode: CacheMode;
  readonly quantization: QuantizedCacheSettings;
  readonly maxNewTokens: number;
}

/** Prompts are padded by at most this many tokens: beyond that padding changes what is studied. */
const MAX_PADDING = 256;
/** Residual lengths are searched this far from the current one (each try is a preflight). */
const MAX_SEARCH = 256;

/**
 * The nearest settings that run, one change each, in the order a researcher would try them: a group
 * size that divides every quantized length (the nearest smaller and larger power of two), another
 * grouping axis, a residual length whose flushes divide, a prompt padded to a length that divides,
 * and, when only a late flush fails, fewer new tokens. Every fix is checked with `runs` before it is
 * offered, so a click never trades one refusal for another.
 */
export function nearestWorkingSettings(config: ModelConfig, run: RunAsked, promptTokens: number, runs: RunsPredicate): RunFix[] {
  if (run.cacheMode !== 'quantized') return [];
  const q = run.quantization;
  const rules = backendRules(String(q.backend));
  if (rules === null || !rules.nbits.includes(q.nbits)) return [];
  const fixes: RunFix[] = [];
  const works = (patch: Partial<QuantizedCacheSettings>, prompt = promptTokens, budget = run.maxNewTokens): boolean => runs({ ...q, ...patch }, prompt, budget);
  const { numKeyValueHeads: heads, headDim } = config.geometry;

  // Group sizes: the nearest working power of two below the current one, then above.
  const below = [...CANDIDATE_GROUP_SIZES].reverse().find((size) => size < q.groupSize && works({ groupSize: size }));
  const above = CANDIDATE_GROUP_SIZES.find((size) => size > q.groupSize && works({ groupSize: size }));
  for (const size of [below, above]) {
    if (size === undefined) continue;
    fixes.push({
      kind: 'group-size', label: `Use q_group_size ${size}`, quantization: { groupSize: size },
      detail: `${size} divides every length this run quantizes: the prompt's ${promptTokens} tokens at prefill and each flush after it (K and V are [1, ${heads}, S, ${headDim}]).`,
    });
  }

  // Axes: the backend's other grouping axes, the same for keys and values first.
  const axisPairs = rules.axes.flatMap((key) => rules.axes.map((value) => [key, value] as const))
    .filter(([key, value]) => key !== q.axisKey || value !== q.axisValue)
    .sort((a, b) => changes(a, q) - changes(b, q) || Number(a[0] !== a[1]) - Number(b[0] !== b[1]));
  const axis = axisPairs.find(([key, value]) => works({ axisKey: key, axisValue: value }));
  if (axis !== undefined) {
    fixes.push({
      kind: 'axis', label: `Use axis_key ${axis[0]}, axis_value ${axis[1]}`, quantization: { axisKey: axis[0], axisValue: axis[1] },
      detail: `${rules.messageName} groups along axis ${axis[0]} for keys and ${axis[1]} for values; with q_group_size ${q.groupSize} every quantized length then splits into groups.`,
    });
  }

  // Residual length: only a flush can be helped by it (the prefill quantizes the prompt alone).
  if (works({}, promptTokens, 1)) {
    const residual = nearestInteger(q.residualLength, 1, MAX_SEARCH, (r) => works({ residualLength: r }));
    if (residual !== null) {
      fixes.push({
        kind: 'residual-length', label: `Use residual_length ${residual}`, quantization: { residualLength: residual },
        detail: `Flushes then re-quantize ${promptTokens} + k·${Math.max(residual, 2)} tokens, which every group divides.`,
      });
    }
  }

  // Padding: the shortest longer prompt that runs.
  for (let padded = promptTokens + 1; padded <= promptTokens + MAX_PADDING; padded++) {
    if (!works({}, padded)) continue;
    fixes.push({
      kind: 'pad-prompt', label: `Pad the prompt to ${padded} tokens`, padPromptTo: padded,
      detail: `${padded - promptTokens} pad token${padded - promptTokens === 1 ? '' : 's'} on the left, masked out by the attention mask (transformers' padding_side="left"); ${padded} tokens split into groups at prefill and at every flush.`,
    });
    break;
  }

  // Fewer new tokens: when only a flush late in the run fails.
  if (works({}, promptTokens, 1)) {
    // Failing is monotone in the budget (a longer run reaches every flush a shorter one does): bisect.
    let low = 1;
    let high = run.maxNewTokens - 1;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (works({}, promptTokens, middle)) low = middle;
      else high = middle - 1;
    }
    const budget = low;
    if (budget < run.maxNewTokens && works({}, promptTokens, budget)) {
      fixes.push({
        kind: 'max-new-tokens', label: `Generate at most ${budget} tokens`, maxNewTokens: budget,
        detail: `The first flush that fails comes after decode step ${budget - 1}; a shorter run never reaches it.`,
      });
    }
  }
  return fixes;
}

function changes(pair: readonly [number, number], q: QuantizedCacheSettings): number {
  return Number(pair[0] !== q.axisKey) + Number(pair[1] !== q.axisValue);
}

/** The integer ≥ min, at most maxDistance away, nearest to `start` (the smaller one on a tie) for which `test` holds. */
function nearestInteger(start: number, min: number, maxDistance: number, test: (value: number) => boolean): number | null {
  for (let distance = 1; distance <= maxDistance; distance++) {
    for (const candidate of [start - distance, start + distance]) {
      if (candidate >= min && test(candidate)) return candidate;
    }
  }
  return null;
}
