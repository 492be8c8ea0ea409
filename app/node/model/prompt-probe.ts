import { longestPromptFitting, PREFILL_MEMORY_SHARE } from '../../engine/prefill-memory.js';
import { promptTokenLimit, promptTooLong, type PromptTokenLimit } from '../../engine/prompt-length.js';
import type { RunSettings } from '../../engine/types.js';
import { availableMemoryBytes } from '../available-memory.js';
import type { ModelTokenizer } from './load-tokenizer.js';

/**
 * Tokens a prefix may pass the limit by before the prompt is refused: a cut inside a word encodes
 * that word differently from the whole text, so a prefix just over the limit proves nothing.
 */
const CUT_SLACK_TOKENS = 64;

/** The prompt limit of this run: its positions when it refuses to pass them, and on the CPU the prefill's memory. */
export function runPromptLimit(geometry: { readonly maxPositionEmbeddings: number | null; readonly numAttentionHeads: number }, settings: RunSettings): PromptTokenLimit {
  return promptTokenLimit({
    maxPositions: geometry.maxPositionEmbeddings,
    maxNewTokens: settings.maxNewTokens,
    refusePastPositions: settings.refusePastPositions === true,
    memoryTokens: settings.executionProvider === 'cpu' ? longestPromptFitting(geometry.numAttentionHeads, availableMemoryBytes() * PREFILL_MEMORY_SHARE) : null,
  });
}

/**
 * Refuses a prompt past `limit` from growing prefixes of it, before it is encoded whole: the first
 * prefix is 4 characters per allowed token (text runs 2 to 5 per token), and each next one twice as
 * long, so the work done is at most a few times the limit's worth of text, whatever the prompt's size
 * (10 MB once took 142 s and 2.9 GB to be refused). A prompt shorter than the first prefix, or one
 * whose prefixes stay within the limit to its end, is left to the run's own encoding and its exact
 * check. Prefixes are encoded without special tokens: the run's encoding (BOS, a chat template) has
 * as many or more.
 */
export function probePromptLength(tokenizer: ModelTokenizer, prompt: string, limit: PromptTokenLimit): void {
  if (!Number.isFinite(limit.tokens) || limit.tokens >= Number.MAX_SAFE_INTEGER) return;
  for (let characters = Math.max(4096, limit.tokens * 4); characters < prompt.length; characters *= 2) {
    const prefix = prompt.slice(0, withoutSplitPair(prompt, characters));
    const tokens = tokenizer.encodeVerbatim(prefix).length;
    if (tokens > limit.tokens + CUT_SLACK_TOKENS) {
      throw promptTooLong(limit, { tokens, exact: false, characters: prefix.length, ofCharacters: prompt.length });
    }
  }
}

/** A cut that does not split a UTF-16 surrogate pair (an emoji) in two. */
function withoutSplitPair(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}
