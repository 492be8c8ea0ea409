import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { ModelConfig } from '../config/model-config.js';
import type { CacheMode } from '../engine/types.js';
import { checkRun } from '../preflight/check-run.js';
import { MAX_WHAT_IF_CONTEXT } from './memory-what-if.js';

export interface WhatIfQuestion {
  readonly config: ModelConfig;
  readonly cacheMode: CacheMode;
  readonly settings: QuantizedCacheSettings;
  /** what the fields hold: a number, or the text typed when it is not one */
  readonly contextLength: number | string;
  readonly promptTokens: number | string;
}

/** Why there is no estimate (errors), and what is worth knowing about the one shown (warnings). */
export interface WhatIfVerdict {
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
}

/**
 * The what-if argues back instead of printing a number for a question that has none: a context or
 * prompt that is not a whole positive number of tokens, a prompt longer than its context, a context
 * beyond what the estimate allocates, and settings the cache would refuse at these lengths (the
 * backend's own message, as a run would get it) never become "0 B". A context past the model's
 * max_position_embeddings is estimated, with a warning.
 */
export function whatIfVerdict(question: WhatIfQuestion): WhatIfVerdict {
  const errors: string[] = [];
  const warnings: string[] = [];
  const context = tokens(question.contextLength, 'Context length', errors);
  const prompt = tokens(question.promptTokens, 'The prompt', errors);
  if (context !== null && context > MAX_WHAT_IF_CONTEXT) {
    errors.push(`Context length ${context.toLocaleString('en-US')} is beyond what the what-if estimates (${MAX_WHAT_IF_CONTEXT.toLocaleString('en-US')} tokens).`);
  }
  if (context !== null && prompt !== null && prompt > context) {
    errors.push(`The prompt (${prompt} tokens) is longer than the context (${context} tokens): a context holds the prompt and the tokens generated after it.`);
  }
  if (errors.length > 0 || context === null || prompt === null) return { errors, warnings };
  const maxPositions = question.config.geometry.maxPositionEmbeddings;
  if (maxPositions !== null && context > maxPositions) {
    warnings.push(`${context} tokens is past this model's max_position_embeddings = ${maxPositions}: the graph would run, but the model was not trained for positions beyond ${maxPositions}.`);
  }
  if (question.cacheMode === 'quantized') {
    // the cache quantizes the prompt at prefill and re-quantizes at each flush up to the context
    const check = checkRun(question.config, { cacheMode: 'quantized', quantization: question.settings, maxNewTokens: context - prompt + 1 }, prompt);
    if (check.refusal !== null) {
      const where = check.failure === null ? '' : check.failure.step === 0 ? ` at prefill (${check.failure.seq} tokens)` : ` at the flush of decode step ${check.failure.step} (${check.failure.seq} tokens)`;
      errors.push(`These settings are refused${where}, so the cache never holds ${context} tokens: ${sentence(firstLine(check.refusal.message))}${check.refusal.fix !== undefined ? ` ${check.refusal.fix}` : ''}`);
    }
  }
  return { errors, warnings };
}

function tokens(value: number | string, what: string, errors: string[]): number | null {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1) return value;
  const shown = typeof value === 'string' ? (value.trim() === '' ? 'empty' : `"${value}"`) : String(value);
  errors.push(`${what} must be a whole number of tokens, at least 1; it is ${shown}.`);
  return null;
}

/** The library's text as a sentence of its own: a final full stop where it has none. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function firstLine(message: string): string {
  return message.split('\n')[0]!;
}
