import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../../cache/cache-config.js';
import { GPT2_COMBINED_NAMING } from '../../engine/io-naming.js';
import type { EvalSettings } from '../../lab/eval-settings.js';
import { SeededRandom } from '../../synthetic/seeded-random.js';
import { writeFixtureFolder } from '../model/test-support/layout-fixtures.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { runEval } from './run-eval.js';
import { tempReferenceStore } from './test-support/eval-settings.js';

const references = tempReferenceStore();
const fixtures = mkdtempSync(join(tmpdir(), 'kvscope-combined-eval-'));
const GPT2 = join(import.meta.dirname, '../../../../shared/models/ort-genai-tiny/gpt2-combined-past');

afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
  references.remove();
  rmSync(fixtures, { recursive: true, force: true });
});

/** `count` token ids below `vocab` (the shared exports' tokenizers encode past their cut vocabularies). */
function randomIds(count: number, vocab: number, seed: number): number[] {
  const random = new SeededRandom(seed);
  return Array.from({ length: count }, () => random.nextInt(vocab));
}

function idsSettings(model: string, ids: readonly number[], windows: EvalSettings['windows'], quantization: QuantizedCacheSettings): EvalSettings {
  return {
    model, executionProvider: 'cpu', cacheMode: 'quantized', quantization, dequantize: 'host',
    text: { name: 'ids.txt', content: ids.join(' '), tokenIds: ids }, windows,
  };
}

/** The chunked feed and one token per run give the same figures on the same windows (float noise only: a chunk's kernels round differently). */
async function expectChunkedEqualsTokenByToken(settings: EvalSettings, flushesPerWindow: number): Promise<void> {
  const chunked = await runEval({ ...settings, feed: 'chunked' }, { referenceStore: references.store, perToken: true });
  const single = await runEval({ ...settings, feed: 'token-by-token' }, { referenceStore: references.store, perToken: true });
  expect(chunked.feed).toBe('chunked');
  expect(chunked.timings.runs).toBeLessThan(single.timings.runs);
  expect(chunked.flushCounts).toEqual(single.flushCounts);
  expect(chunked.flushCounts.every((count) => count === flushesPerWindow)).toBe(true);
  expect(chunked.memory.total).toEqual(single.memory.total);
  const relative = (a: number, b: number): number => Math.abs(a - b) / Math.abs(b);
  expect(relative(chunked.summary.ppl, single.summary.ppl)).toBeLessThan(1e-5);
  expect(relative(chunked.summary.pplReference, single.summary.pplReference)).toBeLessThan(1e-5);
  expect(relative(chunked.summary.kld.mean, single.summary.kld.mean)).toBeLessThan(1e-4);
  expect(Math.max(...chunked.perToken!.nll.map((v, i) => Math.abs(v - single.perToken!.nll[i]!)))).toBeLessThan(1e-4);
  expect(chunked.perToken!.top1).toEqual(single.perToken!.top1);
  expect(chunked.summary.kld.mean).toBeGreaterThan(0);
}

describe('eval on GPT-2\'s combined past_N, fed in chunks that end at flush steps', () => {
  it('the shared gpt2-combined-past with transformers\' defaults (residual 128: the first chunk ends at a flush) equals token-by-token', async () => {
    // 2 windows of 512: prefill 256, then chunks of 128 whose last token flushes ([127, 1] updates of one present_N [2, 1, 4, 384, 8]).
    const settings = idsSettings(GPT2, randomIds(1100, 1000, 5), { context: 512, stride: 512, prefill: 256, maxWindows: 2 }, DEFAULT_QUANTIZED_CACHE_SETTINGS);
    await expectChunkedEqualsTokenByToken(settings, 2);
  });

  it('a combined-past tiny decoder whose residual flushes mid-window, chunk after chunk, equals token-by-token', async () => {
    const folder = await writeFixtureFolder(join(fixtures, 'gpt2-tiny'), { graphs: [{ path: 'past.onnx', options: { naming: GPT2_COMBINED_NAMING, idsType: 'int32' } }] });
    // context 64 (the fixture's positions), prefill 20, residual 8: flushes after 8, 16, 24 and 32 decode steps, and 3 of 43 tokens left unflushed.
    const quantization: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 8, residualLength: 8 };
    const settings = idsSettings(folder, randomIds(200, 61, 9), { context: 64, stride: 64, prefill: 20, maxWindows: 3 }, quantization);
    await expectChunkedEqualsTokenByToken(settings, 5);
  });

  it('the lab\'s one-side targets are refused on a combined past (one tensor for both sides), layers with both sides are evaluated', async () => {
    const ids = randomIds(200, 1000, 11);
    const windows = { context: 64, stride: 64, prefill: 20, maxWindows: 2 };
    const quantization: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 8, residualLength: 8 };
    const keysOnly = { ...idsSettings(GPT2, ids, windows, quantization), targets: { layers: null, parts: 'key' as const } };
    await expect(runEval(keysOnly, { referenceStore: references.store })).rejects.toThrow(/--quantize-parts key cannot be evaluated on this graph: it packs keys and values of a layer in one tensor \(past_0/);
    const layers = await runEval({ ...idsSettings(GPT2, ids, windows, quantization), targets: { layers: [1, 3], parts: 'both' } }, { referenceStore: references.store });
    expect(layers.flushCounts).toEqual([0, 5, 0, 5, 0]);
    expect(layers.summary.kld.mean).toBeGreaterThan(0);
  });
});
