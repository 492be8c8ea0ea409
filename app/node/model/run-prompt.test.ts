import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { releaseCachedSessions } from '../ort/session-cache.js';
import { runGeneration } from '../run-generation.js';
import { storiesDir, storiesSettings } from '../test-support/stories.js';
import { readModelFiles, type ModelFiles } from './open-model.js';
import { encodeRunPrompt } from './run-prompt.js';

afterAll(() => releaseCachedSessions());

describe('a run\'s prompt, padded on the left', () => {
  let files: ModelFiles;
  beforeAll(async () => {
    files = await readModelFiles(storiesDir());
  });

  it('encodes as the run does and pads with the first EOS id when the model has no pad token', () => {
    expect(encodeRunPrompt(files, { prompt: 'Once upon a time' })).toEqual({ tokenIds: [1, 403, 407, 261, 378], paddingTokens: 0 });
    // stories260k's generation_config.json says eos_token_id [1, 2]: generate() pads with the first
    const eos = files.specialTokens.eosTokenIds[0]!;
    expect(encodeRunPrompt(files, { prompt: 'Once upon a time', padPromptTo: 8 })).toEqual({ tokenIds: [eos, eos, eos, 1, 403, 407, 261, 378], paddingTokens: 3 });
    expect(encodeRunPrompt(files, { prompt: 'Once upon a time', padPromptTo: 3 }).paddingTokens).toBe(0);
  });

  it('masks the pads out: the padded run generates what the unpadded one does', async () => {
    const plain = await runGeneration(storiesSettings({ prompt: 'Once upon a time', maxNewTokens: 24 }));
    const padded = await runGeneration(storiesSettings({ prompt: 'Once upon a time', maxNewTokens: 24, padPromptTo: 8 }));
    expect(padded.promptTokenIds).toHaveLength(8);
    expect(padded.generatedTokenIds).toEqual(plain.generatedTokenIds);
  });

  it('lets transformers\' default group size run on a prompt padded to an even length', async () => {
    const settings = storiesSettings({ prompt: 'Once upon a time', maxNewTokens: 8, cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS });
    await expect(runGeneration(settings)).rejects.toThrow(/Group size \(64\) must be a divisor of \(160\)/);
    const result = await runGeneration({ ...settings, padPromptTo: 6 });
    expect(result.steps[0]!.seqLength).toBe(6);
    expect(result.generatedTokenIds).toHaveLength(8);
  });
});
