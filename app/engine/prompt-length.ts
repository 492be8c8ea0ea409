import { KvscopeError } from '../errors.js';

/**
 * How long a prompt a run may take, known before the prompt is encoded: a 10 MB prompt file was once
 * tokenized whole (142 s, 2.9 GB) only to be refused, with advice (12,834 tokens) past the model's
 * 512 positions. The limit is the least of:
 * - the model's positions, when the run refuses to pass them: max_position_embeddings − max new tokens;
 * - the prefill's memory on the CPU (prefill-memory.ts): the longest prompt whose scores fit.
 * The encoder then reads the prompt in growing prefixes (node/model/prompt-probe.ts) and stops as
 * soon as one passes the limit, so the work is proportional to the limit, not to the prompt.
 */
export interface PromptTokenLimit {
  /** the most prompt tokens (padding and BOS included) the run takes */
  readonly tokens: number;
  /** which bound set it, for the message */
  readonly bound: 'positions' | 'memory';
  readonly maxPositions: number | null;
  readonly maxNewTokens: number;
  /** the memory bound in tokens (CPU only), null where the device's memory is the runtime's to report */
  readonly memoryTokens: number | null;
}

/** A prompt longer than its run can take (positions or memory): refused before the rest of it is encoded. */
export class PromptLengthError extends KvscopeError {
  override readonly name = 'PromptLengthError';

  constructor(message: string, readonly fix: string) {
    super(message);
  }
}

/**
 * The run's prompt limit; throws PromptLengthError at once when max new tokens alone reach past the
 * model's positions (no prompt, not even one token, would fit).
 */
export function promptTokenLimit(options: {
  readonly maxPositions: number | null;
  readonly maxNewTokens: number;
  readonly refusePastPositions: boolean;
  readonly memoryTokens: number | null;
}): PromptTokenLimit {
  const { maxPositions, maxNewTokens, refusePastPositions, memoryTokens } = options;
  const positionTokens = refusePastPositions && maxPositions !== null ? maxPositions - maxNewTokens : null;
  if (positionTokens !== null && positionTokens < 1) {
    throw new PromptLengthError(
      `--max-new-tokens ${maxNewTokens} reaches past the model's max_position_embeddings = ${maxPositions} with even a 1-token prompt: ` +
      'the graph would run on positions the model was not trained for. The run was not started.',
      `Ask for at most ${maxPositions! - 1} new tokens (fewer, by the prompt's length), or pass --allow-past-positions to run past them anyway.`,
    );
  }
  const candidates: { tokens: number; bound: PromptTokenLimit['bound'] }[] = [];
  if (positionTokens !== null) candidates.push({ tokens: positionTokens, bound: 'positions' });
  if (memoryTokens !== null) candidates.push({ tokens: memoryTokens, bound: 'memory' });
  const least = candidates.sort((a, b) => a.tokens - b.tokens)[0] ?? { tokens: Number.MAX_SAFE_INTEGER, bound: 'memory' as const };
  return { ...least, maxPositions, maxNewTokens, memoryTokens };
}

/**
 * The refusal of a prompt past the limit. `found` is its exact length when it was encoded whole, or
 * what a prefix of it encoded to when the encoder stopped early (`exact: false`).
 */
export function promptTooLong(limit: PromptTokenLimit, found: { readonly tokens: number; readonly exact: boolean; readonly characters: number; readonly ofCharacters: number }): PromptLengthError {
  const length = found.exact
    ? `The prompt is ${found.tokens} tokens`
    : `The prompt is more than ${limit.tokens} tokens (its first ${found.characters} of ${found.ofCharacters} characters alone encode to ${found.tokens}; the rest was not encoded)`;
  const why = limit.bound === 'positions'
    ? `the model has max_position_embeddings = ${limit.maxPositions}, and with up to ${limit.maxNewTokens} new tokens a prompt may take ${limit.tokens}`
    : `prefilling more than ${limit.tokens} tokens at once needs more memory than a run may take on this machine (prefill-memory: attention scores in float32)`;
  const pastPositions = limit.bound === 'positions' ? ', or pass --allow-past-positions to run past the model\'s positions (untrained)' : '';
  return new PromptLengthError(`${length}; ${why}. The run was not started.`, `Shorten the prompt to at most ${limit.tokens} tokens${limit.bound === 'positions' ? ', or ask for fewer new tokens' : ''}${pastPositions}.`);
}
