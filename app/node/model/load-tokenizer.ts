import { Tokenizer } from '@huggingface/tokenizers';
import { chatTemplateFromConfig, renderChatPrompt, specialTokenStrings, type ChatTemplate } from '../../engine/chat-prompt.js';
import { TokenizerError } from '../../engine/engine-errors.js';
import type { PromptFormat } from '../../engine/types.js';
import { jsonSyntaxProblem } from '../../json-syntax.js';
import { readGuardedText, readGuardedTextSync } from '../files/guarded-read.js';
import type { FileKind } from '../files/file-kinds.js';
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

/** The tokenizer's files as text (tokenizer.json, tokenizer_config.json, chat_template.jinja), read through the guarded reader. */
export interface TokenizerTexts {
  readonly tokenizer: string;
  readonly tokenizerConfig: string | null;
  readonly chatTemplate: string | null;
}

/** Reads the tokenizer's files without blocking the thread (hosts: app/node/files/guarded-read.ts). */
export async function readTokenizerTexts(folder: ModelFolder): Promise<TokenizerTexts> {
  const tokenizerPath = requireTokenizerPath(folder);
  const read = (path: string | null, kind: FileKind, wrap: (error: unknown) => Error): Promise<string | null> =>
    path === null ? Promise.resolve(null) : readGuardedText(path, kind).catch((error: unknown) => { throw wrap(error); });
  const [tokenizer, tokenizerConfig, chatTemplate] = await Promise.all([
    read(tokenizerPath, 'tokenizer', (error) => unreadable(error)),
    read(folder.tokenizerConfigPath, 'tokenizer-config', (error) => unreadable(error)),
    read(folder.chatTemplatePath, 'chat-template', (error) => templateUnreadable(folder.chatTemplatePath!, error)),
  ]);
  return { tokenizer: tokenizer!, tokenizerConfig, chatTemplate };
}

/** The same, synchronously (the generation worker and the CLI, which serve no one else meanwhile). */
export function readTokenizerTextsSync(folder: ModelFolder): TokenizerTexts {
  const tokenizerPath = requireTokenizerPath(folder);
  const read = (path: string | null, kind: FileKind, wrap: (error: unknown) => Error): string | null => {
    if (path === null) return null;
    try {
      return readGuardedTextSync(path, kind);
    } catch (error) {
      throw wrap(error);
    }
  };
  return {
    tokenizer: read(tokenizerPath, 'tokenizer', (error) => unreadable(error))!,
    tokenizerConfig: read(folder.tokenizerConfigPath, 'tokenizer-config', (error) => unreadable(error)),
    chatTemplate: read(folder.chatTemplatePath, 'chat-template', (error) => templateUnreadable(folder.chatTemplatePath!, error)),
  };
}

export function loadTokenizer(folder: ModelFolder, texts: TokenizerTexts = readTokenizerTextsSync(folder)): ModelTokenizer {
  const tokenizerPath = requireTokenizerPath(folder);
  const tokenizerJson = parseJson(tokenizerPath, texts.tokenizer);
  // tokenizer_config.json adds BOS/EOS flags and the chat template; a bare tokenizer.json still works.
  const tokenizerConfig = folder.tokenizerConfigPath === null || texts.tokenizerConfig === null ? {} : parseJson(folder.tokenizerConfigPath, texts.tokenizerConfig);
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(tokenizerJson as object, tokenizerConfig as object);
  } catch (error) {
    throw new TokenizerError(`${tokenizerPath} could not be loaded: ${error instanceof Error ? error.message : String(error)}.`,
      'Use the tokenizer.json from the model\'s repository (a "fast" tokenizer file).', error);
  }
  return {
    encode: (text) => tokenizer.encode(text).ids,
    encodeVerbatim: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids,
    chatTemplate: readChatTemplate(texts.chatTemplate, tokenizerConfig),
    // tokenizers.js refuses an empty list; the empty text is what transformers returns for it.
    decode: (ids) => (ids.length === 0 ? '' : tokenizer.decode([...ids], { skip_special_tokens: true })),
  };
}

function requireTokenizerPath(folder: ModelFolder): string {
  if (folder.tokenizerPath === null) {
    throw new TokenizerError(`${folder.folder} has no tokenizer.json, so prompts cannot be encoded nor tokens decoded.`,
      'Copy tokenizer.json and tokenizer_config.json from the model\'s Hugging Face repository into the folder.');
  }
  return folder.tokenizerPath;
}

/** `chat_template.jinja` wins over tokenizer_config.json's `chat_template`, as in transformers. */
function readChatTemplate(templateFile: string | null, tokenizerConfig: unknown): ChatTemplate | null {
  const specialTokens = specialTokenStrings(tokenizerConfig);
  if (templateFile !== null) return { source: 'chat_template.jinja', template: templateFile, specialTokens };
  const template = chatTemplateFromConfig(tokenizerConfig);
  return template === null ? null : { source: 'tokenizer_config.json', template, specialTokens };
}

function unreadable(error: unknown): TokenizerError {
  const fix = (error as { fix?: unknown }).fix;
  return new TokenizerError(error instanceof Error ? error.message : String(error),
    typeof fix === 'string' && fix !== '' ? fix : 'Download the file again from the model\'s repository.', error);
}

function templateUnreadable(path: string, error: unknown): TokenizerError {
  return new TokenizerError(`${path} could not be read: ${error instanceof Error ? error.message : String(error)}`,
    'Check the file\'s permissions, or remove it to use tokenizer_config.json\'s template.', error);
}

/** V8's JSON.parse messages quote the text around the fault; only its position is reported (json-syntax.ts). */
function parseJson(path: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TokenizerError(`${path} is not valid JSON${jsonSyntaxProblem(error, text)}.`,
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
