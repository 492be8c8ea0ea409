import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { storiesDir, storiesSettings } from '../test-support/stories.js';
import { RunChecker } from './run-checker.js';

const checker = new RunChecker({ resolveModel: async (model) => model });
const quantized = (patch: Partial<typeof DEFAULT_QUANTIZED_CACHE_SETTINGS> = {}, more: Parameters<typeof storiesSettings>[0] = {}) =>
  storiesSettings({ cacheMode: 'quantized', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, ...patch }, prompt: 'Once upon a time', maxNewTokens: 128, ...more });
const temp: string[] = [];
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

describe('RunChecker on stories260k', () => {
  it('tokenizes the real prompt: transformers\' defaults refused on its 5 tokens, with the backend\'s message and fixes', async () => {
    const check = await checker.check(quantized());
    expect(check).toMatchObject({ ok: false, promptTokens: 5, maxNewTokens: 128, contextTokens: 133, maxPositions: 512 });
    expect(check.refusal?.message).toMatch(/^Group size \(64\) must be a divisor of \(160\)/);
    expect(check.fixes.map((fix) => fix.label)).toEqual(expect.arrayContaining(['Use q_group_size 32', 'Pad the prompt to 6 tokens']));
    expect(check.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('judges a pasted 10 MB prompt from a prefix, as the run would, in well under the time encoding it took (issue 24)', async () => {
    const prompt = 'Once upon a time there was a little girl named Lily. '.repeat(200_000);
    const started = performance.now();
    const check = await checker.check(quantized({ groupSize: 32 }, { prompt }));
    expect(check.ok).toBe(false);
    expect(check.refusal?.message).toMatch(/^The prompt is more than \d+ tokens \(its first \d+ of 10600000 characters alone encode to \d+; the rest was not encoded\); prefilling more than/);
    expect(check.refusal?.fix).toMatch(/^Shorten the prompt to at most \d+ tokens\.$/);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('checks the padded prompt as the run encodes it', async () => {
    expect(await checker.check(quantized({}, { padPromptTo: 6 }))).toMatchObject({ ok: true, promptTokens: 6, flushes: 0 });
    expect(await checker.check(quantized({ groupSize: 32 }))).toMatchObject({ ok: true, promptTokens: 5 });
    // the empty prompt starts from BOS alone
    expect(await checker.check(quantized({ groupSize: 32 }, { prompt: '' }))).toMatchObject({ ok: true, promptTokens: 1 });
  });

  it('refuses a chat turn on a model without a chat template, and a missing folder, with their fixes', async () => {
    const chat = await checker.check(quantized({ groupSize: 32 }, { promptFormat: 'chat' }));
    expect(chat.ok).toBe(false);
    expect(chat.refusal?.message).toContain('no chat template');
    const missing = await checker.check(quantized({}, { model: '/no/such/model' }));
    expect(missing.refusal?.message).toContain('/no/such/model does not exist');
    expect(missing.refusal?.fix).toBeDefined();
  });

  it('reads an edited config again', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'kvscope-check-'));
    temp.push(folder);
    cpSync(storiesDir(), folder, { recursive: true });
    const settings = quantized({ groupSize: 32 }, { model: folder, maxNewTokens: 600 });
    expect((await checker.check(settings)).notes).toHaveLength(1);
    const config = JSON.parse((await import('node:fs')).readFileSync(join(folder, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: 4096 }));
    expect(await checker.check(settings)).toMatchObject({ maxPositions: 4096, notes: [] });
  });

  it('refuses an execution provider the host found unusable, with its fix', async () => {
    const strict = new RunChecker({ resolveModel: async (model) => model, executionProviderProblem: async (name) => (name === 'webgpu' ? { message: 'no adapter', fix: 'set VK_ICD_FILENAMES' } : null) });
    expect((await strict.check(quantized({ groupSize: 32 }, { executionProvider: 'webgpu' }))).refusal).toEqual({ message: 'no adapter', fix: 'set VK_ICD_FILENAMES' });
    expect((await strict.check(quantized({ groupSize: 32 }))).ok).toBe(true);
  });
});

/** ../shared/models/ort-genai-tiny/lfm2-hybrid-stub: no tokenizer, 1000 ids, attention layers 1 and 3 (4 KV heads of 8). */
describe('RunChecker on a folder without a tokenizer (prompt ids)', () => {
  const stub = join(storiesDir(), '..', 'ort-genai-tiny', 'lfm2-hybrid-stub');
  const ids = (promptTokenIds: number[] | undefined, patch: Partial<typeof DEFAULT_QUANTIZED_CACHE_SETTINGS> = {}) =>
    quantized({ layerPolicy: 'full-attention-only', ...patch }, { model: stub, prompt: '', ...(promptTokenIds !== undefined ? { promptTokenIds } : {}), maxNewTokens: 8 });

  it('checks exactly the ids given: their count is the prompt length the cache quantizes', async () => {
    expect(await checker.check(ids([5, 6, 7, 8]))).toMatchObject({ ok: true, promptTokens: 4, refusal: null });
    // 3 ids: 4·3·8 = 96 values, which quanto's group of 64 does not divide
    const odd = await checker.check(ids([5, 6, 7]));
    expect(odd).toMatchObject({ ok: false, promptTokens: 3 });
    expect(odd.refusal?.message).toMatch(/^Group size \(64\) must be a divisor of \(96\)/);
    expect(await checker.check(ids([5, 6, 7], { groupSize: 32 }))).toMatchObject({ ok: true, promptTokens: 3 });
  });

  it('refuses ids outside the graph\'s vocabulary, and a text prompt, with what to do', async () => {
    expect((await checker.check(ids([5, 1000]))).refusal).toEqual({
      message: 'prompt ids 1000 are not token ids of this model (its logits have 1000 entries).', fix: 'Give at least one id, each from 0 to 999.',
    });
    const text = await checker.check(ids(undefined));
    expect(text.refusal?.message).toContain('has no tokenizer.json');
  });
});
