import { describe, expect, it } from 'vitest';
import { chatTemplateFromConfig, renderChatPrompt, specialTokenStrings, type ChatTemplate } from './chat-prompt.js';
import { TokenizerError } from './engine-errors.js';

// Written here in the style of real templates: ChatML (Qwen, SmolLM) and Llama-2's [INST] form.
const CHATML = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
const INST = "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] | trim + ' [/INST]' }}" +
  '{% else %}{{ message[\'content\'] + eos_token }}{% endif %}{% endfor %}';

const chat = (template: string, specialTokens: Record<string, string> = {}): ChatTemplate => ({ source: 'tokenizer_config.json', template, specialTokens });

describe('renderChatPrompt (apply_chat_template, one user turn, add_generation_prompt)', () => {
  it('renders ChatML with the assistant header appended', () => {
    expect(renderChatPrompt(chat(CHATML), 'Hi there')).toBe('<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n');
  });

  it('gives templates their special-token strings', () => {
    expect(renderChatPrompt(chat(INST, { bos_token: '<s>', eos_token: '</s>' }), '  Tell a story ')).toBe('<s>[INST] Tell a story [/INST]');
  });

  it('refuses a template that does not parse or render, with what to do', () => {
    expect(() => renderChatPrompt(chat('{% for m in messages %}{{ m.content }}'), 'x')).toThrow(TokenizerError);
    expect(() => renderChatPrompt(chat("{{ raise_exception('Only system and user roles') }}"), 'x')).toThrow(/failed on a one-message user turn/);
    const thrown = ((): unknown => {
      try {
        renderChatPrompt(chat('{% if %}'), 'x');
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(thrown).toBeInstanceOf(TokenizerError);
    expect((thrown as TokenizerError).fix).toMatch(/plain-text prompt format/);
  });
});

describe('chat templates in tokenizer_config.json', () => {
  it('reads the string form and the named-list form (default first)', () => {
    expect(chatTemplateFromConfig({ chat_template: CHATML })).toBe(CHATML);
    expect(chatTemplateFromConfig({ chat_template: [{ name: 'tool_use', template: 'T' }, { name: 'default', template: 'D' }] })).toBe('D');
    expect(chatTemplateFromConfig({ chat_template: [{ name: 'rag', template: 'R' }] })).toBe('R');
    expect(chatTemplateFromConfig({ chat_template: '  ' })).toBeNull();
    expect(chatTemplateFromConfig({})).toBeNull();
    expect(chatTemplateFromConfig(null)).toBeNull();
  });

  it('reads special tokens written as strings or as AddedToken objects', () => {
    expect(specialTokenStrings({ bos_token: '<s>', eos_token: { content: '</s>', lstrip: false }, pad_token: null })).toEqual({ bos_token: '<s>', eos_token: '</s>' });
  });
});
