import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { TokenizerError } from '../../engine/engine-errors.js';
import type { ModelFolder } from './model-folder.js';

/** Encode and decode with the model's own tokenizer (@huggingface/tokenizers, the transformers.js tokenizer). */
export interface ModelTokenizer {
  /** with the tokenizer's special tokens (BOS for Llama tokenizers) */
  encode(text: string): number[];
  /** special tokens skipped, as transformers' `decode(..., skip_special_tokens=True)` */
  decode(ids: readonly number[]): string;
}

export function loadTokenizer(folder: ModelFolder): ModelTokenizer {
  if (folder.tokenizerPath === null) {
    throw new TokenizerError(`${folder.folder} has no tokenizer.json, so prompts cannot be encoded nor tokens decoded.`,
      'Copy tokenizer.json and tokenizer_config.json from the model\'s Hugging Face repository into the folder.');
  }
  const tokenizerJson = readJson(folder.tokenizerPath);
  // tokenizer_config.json adds BOS/EOS flags and the chat template; a bare tokenizer.json still works.
  const tokenizerConfig = folder.tokenizerConfigPath === null ? {} : readJson(folder.tokenizerConfigPath);
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(tokenizerJson as object, tokenizerConfig as object);
  } catch (error) {
    throw new TokenizerError(`${folder.tokenizerPath} could not be loaded: ${error instanceof Error ? error.message : String(error)}.`,
      'Use the tokenizer.json from the model\'s repository (a "fast" tokenizer file).', error);
  }
  return {
    encode: (text) => tokenizer.encode(text).ids,
    // tokenizers.js refuses an empty list; the empty text is what transformers returns for it.
    decode: (ids) => (ids.length === 0 ? '' : tokenizer.decode([...ids], { skip_special_tokens: true })),
  };
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new TokenizerError(`${path} is not valid JSON: ${error instanceof Error ? error.message : String(error)}.`,
      'Download the file again from the model\'s repository.', error);
  }
}

/**
 * The prompt's ids. An empty prompt means "start from BOS only" (stories260k's README case): if the
 * tokenizer gives nothing for it, the BOS id from generation_config.json is used.
 */
export function encodePrompt(tokenizer: ModelTokenizer, prompt: string, bosTokenId: number | null): number[] {
  const ids = tokenizer.encode(prompt);
  if (ids.length === 0 && bosTokenId !== null) return [bosTokenId];
  return ids;
}
