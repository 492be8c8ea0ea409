import { describe, expect, it } from 'vitest';
import { CacheError } from '../errors.js';
import type { KvTensor } from '../tensor/kv-tensor.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from './cache-config.js';
import { KvCache } from './kv-cache.js';
import { planCacheLayers } from './layer-plan.js';
import { QuantizedLayer } from './quantized-layer.js';
import { firstBitDifference } from './test-support/compare.js';
import { trackDisposables } from './test-support/disposables.js';
import { FakeGridQuantizer } from './test-support/fake-quantizer.js';
import { concatSeq, randomTensor } from './test-support/tensors.js';

const track = trackDisposables();
const settings: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 16, residualLength: 3 };

function kv(n: number, seed: number): [KvTensor, KvTensor] {
  return [randomTensor([1, 2, n, 8], seed), randomTensor([1, 2, n, 8], seed + 1)];
}

/** Prefill of 4 tokens, then `steps` single-token updates, on every layer that has a cache. */
function run(cache: KvCache, steps: number): void {
  for (let step = 0; step <= steps; step++) {
    for (let layer = 0; layer < cache.layerCount; layer++) {
      if (cache.layer(layer) === null) continue;
      cache.update(layer, ...kv(step === 0 ? 4 : 1, 100 * step + 10 * layer));
    }
  }
}

describe('KvCache', () => {
  const plan = planCacheLayers(['conv', 'full_attention', 'sliding_attention', 'full_attention'].map((actualKind) => ({ actualKind, hasKvCache: actualKind !== 'conv' })), 'full-attention-only');

  it('builds the planned layer per index and routes updates to it', () => {
    const cache = track(new KvCache({ plan, settings, quantizer: new FakeGridQuantizer() }));
    expect(plan).toEqual(['none', 'quantized', 'dynamic', 'quantized']);
    expect(cache.layer(0)).toBeNull();
    expect(cache.layer(1)).toBeInstanceOf(QuantizedLayer);
    expect(cache.layer(2)?.kind).toBe('dynamic');
    expect(cache.seqLength()).toBe(0);
    run(cache, 5);
    expect(cache.seqLength()).toBe(9);
    expect(cache.seqLength(2)).toBe(9);
    expect(cache.layer(1)?.flushCount).toBe(1); // R=3: flush at step 3
    expect(cache.layer(2)?.flushCount).toBe(0);
    cache.dispose();
  });

  it('a dynamic layer returns exactly the concatenated inputs (dynamic cache = no cache)', () => {
    const cache = track(new KvCache({ plan: ['dynamic'], settings }));
    const keys: KvTensor[] = [];
    for (let step = 0; step < 6; step++) {
      const [k, v] = kv(step === 0 ? 5 : 1, step);
      keys.push(k);
      const out = cache.update(0, k, v);
      expect(firstBitDifference(out.key.data, concatSeq(keys).data)).toBe(-1);
    }
    cache.dispose();
  });

  it('refuses updates of layers without a KV cache and out-of-range indices', () => {
    const cache = track(new KvCache({ plan, settings, quantizer: new FakeGridQuantizer() }));
    expect(() => cache.update(0, ...kv(4, 1))).toThrow(/layer 0 keeps no KV cache/);
    expect(() => cache.seqLength(0)).toThrow(CacheError);
    expect(() => cache.update(4, ...kv(4, 1))).toThrow(/layer index 4 is out of range: this cache has layers 0…3/);
    cache.dispose();
  });

  it('needs a quantizer when the plan quantizes a layer', () => {
    expect(() => new KvCache({ plan, settings })).toThrow(/plan quantizes layer 1 but no quantizer was given; pass the `quanto` quantizer/);
  });

  it('keeps per-layer lengths, flushes, quantize events and exact bytes', () => {
    const cache = track(new KvCache({ plan, settings, quantizer: new FakeGridQuantizer() }));
    run(cache, 7);
    expect(cache.layer(0)).toBeNull();
    expect([1, 2, 3].map((i) => [i, cache.layer(i)!.kind, cache.seqLength(i), cache.layer(i)!.flushCount])).toEqual([
      [1, 'quantized', 11, 2],
      [2, 'dynamic', 11, 0],
      [3, 'quantized', 11, 2],
    ]);
    // prefill and the flushes at steps 3 and 6, on each quantized layer; none on the dynamic one
    for (const i of [1, 3]) expect(cache.layer(i)!.events.map((e) => [e.step, e.kind])).toEqual([[0, 'prefill'], [3, 'flush'], [6, 'flush']]);
    expect(cache.layer(2)!.events).toEqual([]);
    // the dynamic layer holds 11 tokens of 2·1·2·8 fp32 values; the quantized ones 10 quantized + 1 residual
    expect(cache.layer(2)!.memory().fullPrecisionBytes).toBe(11 * 32 * 4);
    expect(cache.layer(1)!.memory().fullPrecisionBytes).toBe(1 * 32 * 4);
    expect(cache.layer(1)!.memory().codeBytes).toBe(10 * 32 / 2);
    expect([1, 2, 3].map((i) => cache.layer(i)!.memory().fp32BaselineBytes)).toEqual([11 * 32 * 4, 11 * 32 * 4, 11 * 32 * 4]);
    cache.dispose();
  });

  it('dispose disposes every layer', () => {
    const cache = new KvCache({ plan, settings, quantizer: new FakeGridQuantizer() });
    run(cache, 2);
    const layers = [1, 2, 3].map((i) => cache.layer(i)!);
    cache.dispose();
    expect(cache.disposed).toBe(true);
    expect(layers.every((l) => l.disposed)).toBe(true);
    expect(() => cache.update(1, ...kv(1, 9))).toThrow(/disposed/);
  });
});
