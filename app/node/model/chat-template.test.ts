import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TokenizerError } from '../../engine/engine-errors.js';
import { runGeneration } from '../run-generation.js';
import { copyOfStories, storiesDir, storiesSettings } from '../test-support/stories.js';
import { inspectModel } from './inspect-model.js';
import { encodePrompt, loadTokenizer } from './load-tokenizer.js';
import { findModelFolder } from './model-folder.js';

// A Llama-2-style template (written for this test): BOS, then the turn, then where the answer starts.
const TEMPLATE = "{{ bos_token }}{% for m in messages %}{{ 'User: ' + m['content'] + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ 'Story:' }}{% endif %}";

describe('chat templates of a model folder (stories260k with a template added)', () => {
  let remove = (): void => undefined;
  afterEach(() => remove());

  function withTemplate(where: 'tokenizer_config.json' | 'chat_template.jinja'): string {
    const copy = copyOfStories();
    remove = copy.remove;
    if (where === 'chat_template.jinja') {
      writeFileSync(join(copy.dir, 'chat_template.jinja'), TEMPLATE);
    } else {
      const config = JSON.parse(readFileSync(join(storiesDir(), 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
      writeFileSync(join(copy.dir, 'tokenizer_config.json'), JSON.stringify({ ...config, chat_template: TEMPLATE }));
    }
    return copy.dir;
  }

  it.each(['tokenizer_config.json', 'chat_template.jinja'] as const)('from %s: one user turn, encoded as rendered (one BOS, not two)', (where) => {
    const tokenizer = loadTokenizer(findModelFolder(withTemplate(where)));
    expect(tokenizer.chatTemplate?.source).toBe(where);
    const ids = encodePrompt(tokenizer, 'a cat', 1, 'chat');
    expect(ids).toEqual(tokenizer.encodeVerbatim('<s>User: a cat\nStory:'));
    expect(ids[0]).toBe(1);
    expect(ids.filter((id) => id === 1)).toHaveLength(1);
    // The text format is unchanged: the tokenizer's own BOS, then the prompt.
    expect(encodePrompt(tokenizer, 'a cat', 1)).toEqual(tokenizer.encode('a cat'));
  });

  it('a run in the chat format feeds the rendered turn and records the format', async () => {
    const dir = withTemplate('tokenizer_config.json');
    const tokenizer = loadTokenizer(findModelFolder(dir));
    const result = await runGeneration(storiesSettings({ model: dir, prompt: 'a cat', promptFormat: 'chat', maxNewTokens: 4 }));
    expect(result.promptTokenIds).toEqual(tokenizer.encodeVerbatim('<s>User: a cat\nStory:'));
    expect(result.settings.promptFormat).toBe('chat');
    expect(result.generatedTokenIds).toHaveLength(4);
  });

  it('the workbench learns where the template is; a broken one is a warning, not a refusal', async () => {
    const dir = withTemplate('chat_template.jinja');
    expect((await inspectModel(dir)).chatTemplate).toBe('chat_template.jinja');
    writeFileSync(join(dir, 'chat_template.jinja'), '{% for m in messages %}');
    const broken = await inspectModel(dir);
    expect(broken.ok).toBe(true);
    expect(broken.chatTemplate).toBeNull();
    expect(broken.diagnostics.map((d) => [d.code, d.severity])).toEqual([['chat-template-invalid', 'warning']]);
    expect((await inspectModel(storiesDir())).chatTemplate).toBeNull();
  });

  it('asking for the chat format on a model without a template says what to do', async () => {
    const tokenizer = loadTokenizer(findModelFolder(storiesDir()));
    expect(() => encodePrompt(tokenizer, 'a cat', 1, 'chat')).toThrow(TokenizerError);
    await expect(runGeneration(storiesSettings({ prompt: 'a cat', promptFormat: 'chat', maxNewTokens: 2 }))).rejects.toThrow(/has no chat template/);
  });
});
