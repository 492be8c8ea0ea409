import { EvalInputError } from './lab-errors.js';
import type { WindowSettings } from './eval-settings.js';

/** One evaluation window: `tokens` fed in order, rows `firstScoredRow` … tokens.length − 2 scored. */
export interface EvalWindow {
  readonly index: number;
  /** where the window starts in the text's tokens */
  readonly start: number;
  /** the window's tokens, BOS first when the tokenizer adds one */
  readonly tokens: readonly number[];
  /** tokens fed at once before the scored part (a run's prompt) */
  readonly prefill: number;
}

/** Predictions a window scores: rows prefill … context − 2, each predicting the next token. */
export function scoredRows(window: Pick<EvalWindow, 'tokens' | 'prefill'>): number {
  return window.tokens.length - 1 - window.prefill;
}

/**
 * Cuts the text's tokens (as the tokenizer encodes the whole text, BOS included when it adds one)
 * into windows as llama.cpp's perplexity tool cuts chunks: `context` tokens from every multiple of
 * `stride`, the first token of each replaced by BOS when the tokenizer adds one (llama.cpp: "add BOS
 * token for the first batch of each chunk"), as many as fit (at most `maxWindows`).
 */
export function planWindows(textTokens: readonly number[], bosTokenId: number | null, settings: WindowSettings): EvalWindow[] {
  checkWindowSettings(settings);
  const { context, stride, prefill, maxWindows } = settings;
  if (textTokens.length < context) {
    throw new EvalInputError(
      `the text encodes to ${textTokens.length} tokens, fewer than one window of --context ${context}.`,
      textTokens.length < MIN_CONTEXT
        ? `Use a longer text: the smallest window is --context ${MIN_CONTEXT} (a prefill token, a scored row and the token it predicts).`
        : `Use a longer text, or a smaller --context (at most ${textTokens.length}; at least ${MIN_CONTEXT}).`,
    );
  }
  const fit = Math.floor((textTokens.length - context) / stride) + 1;
  const count = maxWindows === null ? fit : Math.min(fit, maxWindows);
  const addsBos = bosTokenId !== null && textTokens[0] === bosTokenId;
  const windows: EvalWindow[] = [];
  for (let index = 0; index < count; index++) {
    const start = index * stride;
    const tokens = textTokens.slice(start, start + context);
    if (addsBos) tokens[0] = bosTokenId;
    windows.push({ index, start, tokens, prefill });
  }
  return windows;
}

/** The smallest window: one prefill token, one scored row, and the token it predicts. */
export const MIN_CONTEXT = 3;

export function checkWindowSettings(settings: WindowSettings): void {
  const { context, stride, prefill, maxWindows } = settings;
  const integer = (value: number, name: string, min: number): void => {
    if (!Number.isInteger(value) || value < min) throw new EvalInputError(`--${name} must be an integer of at least ${min}, got ${value}.`);
  };
  integer(context, 'context', MIN_CONTEXT);
  integer(stride, 'stride', 1);
  integer(prefill, 'prefill', 1);
  if (maxWindows !== null) integer(maxWindows, 'windows', 1);
  if (prefill > context - 2) {
    throw new EvalInputError(
      `--prefill ${prefill} leaves nothing to score in a window of --context ${context}: rows prefill … context − 2 are scored.`,
      `Use --prefill of at most ${context - 2} (default: half the context, as llama.cpp).`,
    );
  }
}
