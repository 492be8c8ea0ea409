import { UsageError } from './io.js';
import { integerOption, type RawOptions } from './options.js';

/**
 * `--pad-prompt-to N`: left-pad the encoded prompt to N tokens with the pad token (RunSettings.padPromptTo,
 * masked out by the attention mask), the run panel's one-click fix for a prompt length that does not
 * split into groups. A prompt already N tokens or longer is fed as it is.
 */
export function padPromptToOption(options: RawOptions): number | undefined {
  if (options['pad-prompt-to'] === undefined) return undefined;
  const tokens = integerOption(options, 'pad-prompt-to');
  if (tokens < 1) throw new UsageError(`--pad-prompt-to must be at least 1 token, got ${tokens}.`);
  return tokens;
}

/**
 * The prompt lengths a run padded to `padTo` quantizes at prefill: each given length shorter than
 * `padTo` becomes `padTo`; without given lengths, `padTo` itself (any prompt up to that long).
 */
export function paddedSequenceLengths(lengths: readonly number[] | undefined, padTo: number | undefined): number[] | undefined {
  if (padTo === undefined) return lengths === undefined ? undefined : [...lengths];
  if (lengths === undefined) return [padTo];
  return [...new Set(lengths.map((length) => Math.max(length, padTo)))];
}
