import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../../cache/cache-config.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { runEval } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';

const references = tempReferenceStore();
afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
  references.remove();
});

/**
 * quanto 4-bit, groups of 32 (one token row of 4 heads × 8 dims), residual 32: the window ends on a flush (256 + 8·32).
 * The plain cache is compared on the host path, the targeted lane's own (the lab's targets are not rewritten into the graph).
 */
const QUANTO4: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 32 };
const options = { referenceStore: references.store, perToken: true } as const;

describe('lab targets (kvscope extension): quantize some layers, keys or values only', () => {
  it('naming every layer and both sides is exactly the plain cache (the targeted lane feeds what the run lane feeds)', async () => {
    const plain = await runEval(storiesEvalSettings({ cacheMode: 'quantized', quantization: QUANTO4, dequantize: 'host' }, 2), options);
    const all = await runEval(storiesEvalSettings({ cacheMode: 'quantized', quantization: QUANTO4, targets: { layers: [0, 1, 2, 3, 4], parts: 'both' } }, 2), options);
    expect(all.perToken).toEqual(plain.perToken);
    expect(all.memory).toEqual(plain.memory);
    expect(all.flushCounts).toEqual(plain.flushCounts);
    expect(plain.extensions).toEqual([]);
    expect(all.extensions).toEqual(['lab targets: layers 0, 1, 2, 3, 4, keys and values quantized (the rest at full precision)']);
  });

  it('keys only: the values stay exact and are counted at full precision', async () => {
    const keys = await runEval(storiesEvalSettings({ cacheMode: 'quantized', quantization: QUANTO4, targets: { layers: null, parts: 'key' } }, 2), options);
    const both = await runEval(storiesEvalSettings({ cacheMode: 'quantized', quantization: QUANTO4 }, 2), options);
    expect(keys.summary.kld.mean).toBeGreaterThan(0);
    expect(keys.summary.kld.mean).toBeLessThan(both.summary.kld.mean);
    // Per layer at 512 tokens: key codes 512 tokens × 32 values × ½ byte = 8192 B,
    // scale and shift per group of 32 in fp32: 512 groups × 2 × 4 = 4096 B, values 512 × 32 × 4 B = 65,536 B.
    for (const layer of keys.memory.perLayer) {
      expect(layer).toMatchObject({ codeBytes: 8192, metadataBytes: 4096, fullPrecisionBytes: 65_536, totalBytes: 8192 + 4096 + 65_536 });
    }
    expect(both.memory.perLayer[0]).toMatchObject({ codeBytes: 2 * 8192, metadataBytes: 2 * 4096, fullPrecisionBytes: 0 });
    expect(keys.layerErrors.every((e) => e.key !== null && e.value === null)).toBe(true);
  });

  it('one layer at a time: that layer\'s error only, the others at full precision', async () => {
    const one = await runEval(storiesEvalSettings({ cacheMode: 'quantized', quantization: QUANTO4, targets: { layers: [2], parts: 'both' } }, 2), options);
    const all = await runEval(storiesEvalSettings({ cacheMode: 'quantized', quantization: QUANTO4, dequantize: 'host' }, 2), options);
    expect(one.summary.kld.mean).toBeGreaterThan(0);
    expect(one.summary.kld.mean).toBeLessThan(all.summary.kld.mean);
    expect(one.flushCounts).toEqual([0, 0, 8, 0, 0]);
    expect(one.layerErrors.map((e) => e.layer)).toEqual([2]);
    expect(one.memory.perLayer[0]).toMatchObject({ quantizedTokens: 0, fullPrecisionBytes: 512 * 64 * 4 });
    expect(one.memory.perLayer[2]).toEqual(all.memory.perLayer[2]);
  });
});
