import { GenerationError, TokenizerError } from '../../engine/engine-errors.js';
import { promptIdsProblem, tokenizerIdsProblem, vocabularySize, type EncodedSubject } from '../../engine/prompt-token-ids.js';
import type { RunSettings } from '../../engine/types.js';
import { encodePrompt, type ModelTokenizer } from './load-tokenizer.js';
import type { ModelFiles } from './open-model.js';

/** The prompt as a run feeds it: the ids, the left padding among them first. */
export interface RunPrompt {
  /** pad ids first (when padded), then the prompt's ids */
  readonly tokenIds: number[];
  /** how many of `tokenIds` are padding (masked out by the attention mask) */
  readonly paddingTokens: number;
}

type PromptSettings = Pick<RunSettings, 'prompt' | 'promptFormat' | 'promptTokenIds' | 'padPromptTo'>;

/**
 * A run's prompt exactly as the run feeds it: the ids given (RunSettings.promptTokenIds), else the
 * prompt encoded by the model's tokenizer (text or chat turn, BOS from the tokenizer), then left-padded
 * to `padPromptTo` with the pad token. The run and the run panel's check both call this, so the
 * length the panel reports is the length the cache quantizes at prefill.
 */
export function encodeRunPrompt(files: ModelFiles, settings: PromptSettings): RunPrompt {
  const ids = promptIdsFor(settings, files.tokenizer, files.specialTokens.bosTokenId, files.analysis.io?.logitsShape);
  const padding = settings.padPromptTo === undefined ? 0 : Math.max(0, settings.padPromptTo - ids.length);
  if (padding === 0) return { tokenIds: ids, paddingTokens: 0 };
  const pad = padTokenId(files);
  return { tokenIds: [...new Array<number>(padding).fill(pad), ...ids], paddingTokens: padding };
}

/**
 * The prompt's ids: `promptTokenIds` as given (checked against the graph's vocabulary), else the
 * prompt encoded by the model's tokenizer; a folder without tokenizer.json needs the former.
 */
function promptIdsFor(settings: PromptSettings, tokenizer: ModelTokenizer | null, bosTokenId: number | null, logitsShape: readonly (number | string)[] | undefined): number[] {
  if (settings.promptTokenIds !== undefined) {
    const problem = promptIdsProblem(settings.promptTokenIds, vocabularySize(logitsShape, null));
    if (problem !== null) throw new GenerationError(problem.message, problem.fix);
    return [...settings.promptTokenIds];
  }
  if (tokenizer === null) {
    throw new TokenizerError('this model folder has no tokenizer.json, so the prompt cannot be encoded.',
      'Give the prompt as token ids (the run panel\'s "Prompt (token ids)" field; kvscope run --prompt-ids 1,2,3), or copy tokenizer.json from the model\'s repository into the folder.');
  }
  const ids = encodePrompt(tokenizer, settings.prompt, bosTokenId, settings.promptFormat);
  const problem = tokenizerIdsProblem(ids, vocabularySize(logitsShape, null), RUN_PROMPT);
  if (problem !== null) throw new TokenizerError(problem.message, problem.fix);
  return ids;
}

const RUN_PROMPT: EncodedSubject = { subject: 'the prompt', idsInstead: 'the run panel\'s token ids; kvscope run --prompt-ids 1,2,3' };

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
