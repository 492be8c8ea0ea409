import { Template } from '@huggingface/jinja';
import { TokenizerError } from './engine-errors.js';

/**
 * A model's chat template (tokenizer_config.json `chat_template`, or `chat_template.jinja` beside it)
 * and the special-token strings templates refer to (`bos_token`, `eos_token`, …).
 */
export interface ChatTemplate {
  /** where it came from, for messages: e.g. `tokenizer_config.json` */
  readonly source: string;
  readonly template: string;
  readonly specialTokens: Readonly<Record<string, string>>;
}

/**
 * The prompt as transformers' `apply_chat_template([{"role": "user", "content": prompt}],
 * add_generation_prompt=True, tokenize=False)` renders it, with the Jinja engine transformers.js
 * uses (@huggingface/jinja). The result already holds the template's special tokens (BOS and
 * role markers): it is encoded without adding special tokens again, as transformers does.
 */
export function renderChatPrompt(chat: ChatTemplate, prompt: string): string {
  let template: Template;
  try {
    template = new Template(chat.template);
  } catch (error) {
    throw new TokenizerError(`the chat template in ${chat.source} does not parse: ${messageOf(error)}.`,
      'Use the plain-text prompt format, or fix the template (it is Jinja).', error);
  }
  try {
    return template.render({
      ...chat.specialTokens,
      messages: [{ role: 'user', content: prompt }],
      add_generation_prompt: true,
    });
  } catch (error) {
    throw new TokenizerError(`the chat template in ${chat.source} failed on a one-message user turn: ${messageOf(error)}.`,
      'Use the plain-text prompt format instead.', error);
  }
}

/**
 * The template from a parsed tokenizer_config.json: `chat_template` as a string, or the list form
 * `[{name, template}]` (the one named "default", else the first). Null when there is none.
 */
export function chatTemplateFromConfig(config: unknown): string | null {
  const field = (config as { chat_template?: unknown } | null)?.chat_template;
  if (typeof field === 'string' && field.trim() !== '') return field;
  if (Array.isArray(field)) {
    const named = field.filter((t): t is { name?: unknown; template: string } => typeof (t as { template?: unknown })?.template === 'string');
    return (named.find((t) => t.name === 'default') ?? named[0])?.template ?? null;
  }
  return null;
}

/**
 * `bos_token`, `eos_token`, `unk_token`, `pad_token` of tokenizer_config.json as strings (they may be
 * written as `{"content": "<s>", …}` objects), for the template's variables.
 */
export function specialTokenStrings(config: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (config === null || typeof config !== 'object') return out;
  for (const name of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) {
    const value = (config as Record<string, unknown>)[name];
    const content = typeof value === 'string' ? value : (value as { content?: unknown } | null)?.content;
    if (typeof content === 'string') out[name] = content;
  }
  return out;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
