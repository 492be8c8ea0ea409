import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { chatTemplateFromConfig, renderChatPrompt, specialTokenStrings, type ChatTemplate } from '../../engine/chat-prompt.js';
import { TokenizerError } from '../../engine/engine-errors.js';
import type { PromptFormat } from '../../engine/types.js';
import type { ModelFolder } from './model-folder.js';

/** Encode and decode with the model's own tokenizer (@huggingface/tokenizers, the transformers.js tokenizer). */
export interface ModelTokenizer {
  /** with the tokenizer's special tokens (BOS for Llama tokenizers) */
  encode(text: string): number[];
  /** without adding special tokens: for text that holds them already (a rendered chat template) */
  encodeVerbatim(text: string): number[];
  /** the model's chat template, or null when it has none */
  readonly chatTemplate: ChatTemplate | null;
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
    encodeVerbatim: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids,
    chatTemplate: readChatTemplate(folder, tokenizerConfig),
    // tokenizers.js refuses an empty list; the empty text is what transformers returns for it.
    decode: (ids) => (ids.length === 0 ? '' : tokenizer.decode([...ids], { skip_special_tokens: true })),
  };
}

/** `chat_template.jinja` wins over tokenizer_config.json's `chat_template`, as in transformers. */
function readChatTemplate(folder: ModelFolder, tokenizerConfig: unknown): ChatTemplate | null {
  const specialTokens = specialTokenStrings(tokenizerConfig);
  if (folder.chatTemplatePath !== null) {
    let template: string;
    try {
      template = readFileSync(folder.chatTemplatePath, 'utf8');
    } catch (error) {
      throw new TokenizerError(`${folder.chatTemplatePath} could not be read: ${error instanceof Error ? error.message : String(error)}.`,
        'Check the file\'s permissions, or remove it to use tokenizer_config.json\'s template.', error);
    }
    return { source: 'chat_template.jinja', template, specialTokens };
  }
  const template = chatTemplateFromConfig(tokenizerConfig);
  return template === null ? null : { source: 'tokenizer_config.json', template, specialTokens };
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
 * The prompt's ids. `text` (the default): the prompt as typed, with the tokenizer's special tokens; an
 * empty prompt means "start from BOS only" (stories260k's README case): if the tokenizer gives
 * nothing for it, the BOS id from generation_config.json is used. `chat`: one user turn through the
 * model's chat template (chat-prompt.ts), encoded as rendered.
 */
export function encodePrompt(tokenizer: ModelTokenizer, prompt: string, bosTokenId: number | null, format: PromptFormat = 'text'): number[] {
  if (format === 'chat') {
    if (tokenizer.chatTemplate === null) {
      throw new TokenizerError('this model has no chat template (no chat_template in tokenizer_config.json, no chat_template.jinja), so the prompt cannot be formatted as a chat turn.',
        'Use the plain-text prompt format, or add the chat template from the model\'s repository.');
    }
    return tokenizer.encodeVerbatim(renderChatPrompt(tokenizer.chatTemplate, prompt));
  }
  const ids = tokenizer.encode(prompt);
  if (ids.length === 0 && bosTokenId !== null) return [bosTokenId];
  return ids;
}
