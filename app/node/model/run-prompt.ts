import type { RunSettings } from '../../engine/types.js';
import { encodePrompt } from './load-tokenizer.js';
import type { ModelFiles } from './open-model.js';

/** The prompt as a run feeds it: the ids, the left padding among them first. */
export interface RunPrompt {
  /** pad ids first (when padded), then the encoded prompt */
  readonly tokenIds: number[];
  /** how many of `tokenIds` are padding (masked out by the attention mask) */
  readonly paddingTokens: number;
}

/**
 * Encodes a run's prompt exactly as the run does (text or chat turn, BOS from the tokenizer), then
 * left-pads it to `padPromptTo` with the pad token. The run and the run panel's check both call
 * this, so the length the panel reports is the length the cache quantizes at prefill.
 */
export function encodeRunPrompt(files: ModelFiles, settings: Pick<RunSettings, 'prompt' | 'promptFormat' | 'padPromptTo'>): RunPrompt {
  const ids = encodePrompt(files.tokenizer, settings.prompt, files.specialTokens.bosTokenId, settings.promptFormat);
  const padding = settings.padPromptTo === undefined ? 0 : Math.max(0, settings.padPromptTo - ids.length);
  if (padding === 0) return { tokenIds: ids, paddingTokens: 0 };
  const pad = padTokenId(files);
  return { tokenIds: [...new Array<number>(padding).fill(pad), ...ids], paddingTokens: padding };
}

/**
 * config.json's `pad_token_id`, else the first EOS id: what generate() uses when a model defines no
 * pad token ("Setting `pad_token_id` to `eos_token_id`"). Its value is masked out either way.
 */
function padTokenId(files: ModelFiles): number {
  for (const config of [files.config.text, files.config.root]) {
    const value = config['pad_token_id'];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  }
  return files.specialTokens.eosTokenIds[0] ?? 0;
}
