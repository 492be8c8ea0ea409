import { describe, expect, it } from 'vitest';
import { CacheError, QuantizationError } from '../errors.js';
import { errorStats } from '../quant/error-stats.js';
import { kvTensor, type KvShape, type KvTensor } from '../tensor/kv-tensor.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from './cache-config.js';
import { flushSchedule } from './flush-schedule.js';
import { bitsPerValue } from './layer-memory.js';
import { QuantizedLayer } from './quantized-layer.js';
import { firstBitDifference } from './test-support/compare.js';
import { trackDisposables } from './test-support/disposables.js';
import { FakeGridQuantizer, type FakeQuantizedTensor } from './test-support/fake-quantizer.js';
import { concatSeq, copyTensor, randomTensor } from './test-support/tensors.js';

const track = trackDisposables();

function settings(overrides: Partial<QuantizedCacheSettings> = {}): QuantizedCacheSettings {
  return { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 8, ...overrides };
}

/** [1, 2, n, 8]: 16·n values, a multiple of the test group size 8 for every n. */
function kv(n: number, seed: number): [KvTensor, KvTensor] {
  return [randomTensor([1, 2, n, 8], seed), randomTensor([1, 2, n, 8], seed + 7919)];
}

/**
 * The §1.3 pseudo-code, transcribed literally with copying tensors: a second implementation the
 * layer's buffer reuse is checked against. `null` is the 1-D empty residual.
 */
class ReferenceLayer {
  #fake: FakeGridQuantizer;
  #residualLength: number;
  #storeK: KvTensor | null = null;
  #storeV: KvTensor | null = null;
  #resK: KvTensor | null = null;
  #resV: KvTensor | null = null;
  constructor(fake: FakeGridQuantizer, residualLength: number) {
    this.#fake = fake;
    this.#residualLength = residualLength;
  }
  update(k: KvTensor, v: KvTensor): [KvTensor, KvTensor] {
    if (this.#storeK === null || this.#storeV === null) {
      this.#storeK = kvTensor(k.shape, k.dtype, this.#fake.roundTrip(k));
      this.#storeV = kvTensor(v.shape, v.dtype, this.#fake.roundTrip(v));
      return [k, v];
    }
    const keys = concatSeq([this.#storeK, ...(this.#resK ? [this.#resK] : []), k]);
    const values = concatSeq([this.#storeV, ...(this.#resV ? [this.#resV] : []), v]);
    if (this.#resK !== null && this.#resK.shape[2] + 1 >= this.#residualLength) {
      this.#storeK = kvTensor(keys.shape, keys.dtype, this.#fake.roundTrip(keys));
      this.#storeV = kvTensor(values.shape, values.dtype, this.#fake.roundTrip(values));
      this.#resK = this.#resV = null;
    } else {
      this.#resK = this.#resK ? concatSeq([this.#resK, k]) : k;
      this.#resV = this.#resV ? concatSeq([this.#resV, v]) : v;
    }
    return [keys, values];
  }
}

describe('QuantizedLayer update (spec §1.3) with a fake 1/8-grid quantizer', () => {
  it('returns the prefill inputs themselves, unchanged, and quantizes them at once', () => {
    const fake = new FakeGridQuantizer();
    const layer = track(new QuantizedLayer(fake, settings()));
    const [k, v] = kv(10, 1);
    const before = copyTensor(k);
    const out = layer.update(k, v);
    expect(out.key).toBe(k);
    expect(out.value).toBe(v);
    expect(firstBitDifference(k.data, before.data)).toBe(-1);
    expect(fake.calls.quantize).toBe(2);
    expect(layer.memory().quantizedTokens).toBe(10);
    expect(layer.memory().fullPrecisionTokens).toBe(0);
    layer.dispose();
  });

  it('returns a sequence of cumulative length after every update, and seqLength() is that length', () => {
    const layer = track(new QuantizedLayer(new FakeGridQuantizer(), settings({ residualLength: 5 })));
    let cumulative = 0;
    for (const [i, n] of [7, 1, 1, 3, 1, 1, 1, 1, 2, 1, 6, 1, 1, 1, 1].entries()) {
      const [k, v] = kv(n, 100 + i);
      const out = layer.update(k, v);
      cumulative += n;
      expect(out.key.shape).toEqual([1, 2, cumulative, 8]);
      expect(out.value.shape).toEqual([1, 2, cumulative, 8]);
      expect(layer.seqLength()).toBe(cumulative);
      const m = layer.memory();
      expect(m.quantizedTokens + m.fullPrecisionTokens).toBe(cumulative);
    }
    layer.dispose();
  });

  it('reproduces the §1.9 worked trace (P=10, R=4) row by row', () => {
    const layer = track(new QuantizedLayer(new FakeGridQuantizer(), settings({ residualLength: 4 })));
    const rows: unknown[] = [];
    for (const [step, n] of [10, 1, 1, 1, 1, 1].entries()) {
      const flushesBefore = layer.flushCount;
      const out = layer.update(...kv(n, step));
      const m = layer.memory();
      rows.push([step, n, layer.seqLength(), layer.flushCount > flushesBefore, m.quantizedTokens, m.fullPrecisionTokens, out.key.shape[2]]);
    }
    // call, n, cumulative after, flush?, store tokens, residual tokens, returned length (spec §1.9)
    expect(rows).toEqual([
      [0, 10, 10, false, 10, 0, 10],
      [1, 1, 11, false, 10, 1, 11],
      [2, 1, 12, false, 10, 2, 12],
      [3, 1, 13, false, 10, 3, 13],
      [4, 1, 14, true, 14, 0, 14],
      [5, 1, 15, false, 14, 1, 15],
    ]);
    expect(layer.events.map((e) => [e.step, e.kind, e.tokens])).toEqual([[0, 'prefill', 10], [4, 'flush', 14]]);
    layer.dispose();
  });

  describe.each([1, 5])('flush schedule with %i-token updates', (n) => {
    it.each([0, 1, 2, 3, 4, 128])('R=%i: flush steps and bookkeeping match flushSchedule', (r) => {
      const steps = n === 1 ? 300 : 60;
      const layer = track(new QuantizedLayer(new FakeGridQuantizer(), settings({ residualLength: r })));
      layer.update(...kv(4, 1));
      const rows = [];
      for (let step = 1; step <= steps; step++) {
        layer.update(...kv(n, step + 1));
        const m = layer.memory();
        rows.push([layer.seqLength(), m.quantizedTokens, m.fullPrecisionTokens]);
      }
      const schedule = flushSchedule(4, r, steps, n);
      const flushSteps = layer.events.filter((e) => e.kind === 'flush').map((e) => e.step);
      expect(flushSteps).toEqual(schedule.flushSteps);
      expect(rows).toEqual(schedule.rows.slice(1).map((row) => [row.cumulativeLength, row.storeTokens, row.residualTokens]));
      expect(layer.flushCount).toBe(schedule.flushSteps.length);
      if (n === 1) {
        expect(flushSteps[0]).toBe(Math.max(r, 2));
        expect(flushSteps.length).toBe(Math.floor(steps / Math.max(r, 2)));
      }
      if (n === 5 && r === 128) expect(flushSteps[0]).toBe(27);
      layer.dispose();
    });
  });

  it('offers dequant(store) right after each quantize event, and only then (what the next step attends to)', () => {
    const fake = new FakeGridQuantizer();
    const layer = track(new QuantizedLayer(fake, settings({ residualLength: 3 })));
    for (const [step, n] of [6, 1, 1, 1, 1, 1, 1].entries()) {
      const flushesBefore = layer.flushCount;
      layer.update(...kv(n, 40 + step));
      const event = step === 0 || layer.flushCount > flushesBefore;
      for (const part of ['key', 'value'] as const) {
        const offered = layer.dequantizedStore(part);
        if (!event) {
          expect(offered, `step ${step} ${part}`).toBeNull();
          continue;
        }
        const store = layer.stores[part]!;
        expect(offered!.shape).toEqual(store.shape);
        expect(firstBitDifference(offered!.data, fake.dequantize(store).data), `step ${step} ${part}`).toBe(-1);
      }
    }
    layer.dispose();
  });

  it('gives the same tensors and events when handed the graph\'s concatenation, and never writes into it', () => {
    const plain = track(new QuantizedLayer(new FakeGridQuantizer(), settings({ residualLength: 3 })));
    const adopting = track(new QuantizedLayer(new FakeGridQuantizer(), settings({ residualLength: 3 })));
    // What a graph is fed after each update: deq(store) right after an event, else what update returned.
    let fed: [KvTensor, KvTensor] | null = null;
    const handedOver: { array: Float32Array; copy: Float32Array }[] = [];
    for (const [step, n] of [6, 1, 1, 1, 2, 1, 1, 1, 1].entries()) {
      const [k, v] = kv(n, 70 + step);
      const expected = plain.update(k, v);
      const concatenated = fed === null ? undefined : { key: concatSeq([fed[0], k]).data, value: concatSeq([fed[1], v]).data };
      if (concatenated !== undefined) handedOver.push(...[concatenated.key, concatenated.value].map((array) => ({ array, copy: Float32Array.from(array) })));
      const actual = adopting.update(k, v, concatenated);
      expect(firstBitDifference(actual.key.data, expected.key.data), `step ${step} keys`).toBe(-1);
      expect(firstBitDifference(actual.value.data, expected.value.data), `step ${step} values`).toBe(-1);
      const deqKey = adopting.dequantizedStore('key');
      const deqValue = adopting.dequantizedStore('value');
      fed = deqKey !== null && deqValue !== null ? [copyTensor(deqKey), copyTensor(deqValue)] : [copyTensor(actual.key), copyTensor(actual.value)];
    }
    expect(adopting.events).toEqual(plain.events);
    expect(adopting.memory().totalBytes).toBe(plain.memory().totalBytes);
    for (const { array, copy } of handedOver) expect(firstBitDifference(array, copy)).toBe(-1);
    plain.dispose();
    adopting.dispose();
  });

  it('refuses a concatenation that is not cat(history, new), and stays usable and unchanged', () => {
    const layer = track(new QuantizedLayer(new FakeGridQuantizer(), settings({ residualLength: 8 })));
    const [k0, v0] = kv(6, 1);
    layer.update(k0, v0);
    const fed = [copyTensor(layer.dequantizedStore('key')!), copyTensor(layer.dequantizedStore('value')!)] as const;
    const [k, v] = kv(1, 2);
    const wrongNewRow = { key: concatSeq([fed[0], k]).data, value: concatSeq([fed[1], v]).data };
    wrongNewRow.value[wrongNewRow.value.length - 1]! += 1;
    expect(() => layer.update(k, v, wrongNewRow)).toThrow(CacheError);
    const wrongPast = { key: concatSeq([fed[0], k]).data, value: concatSeq([fed[1], v]).data };
    wrongPast.key[0]! += 1;
    expect(() => layer.update(k, v, wrongPast)).toThrow(/first row/);
    expect(layer.seqLength()).toBe(6);
    const out = layer.update(k, v, { key: concatSeq([fed[0], k]).data, value: concatSeq([fed[1], v]).data });
    expect(out.key.shape[2]).toBe(7);
    layer.dispose();
  });

  it('returns exactly [dequant(store) | residual | new] at every step, as the literal §1.3 algorithm does', () => {
    for (const r of [0, 3, 6]) {
      const fake = new FakeGridQuantizer({ seqDependentGrid: true });
      const layer = track(new QuantizedLayer(fake, settings({ residualLength: r })));
      const reference = new ReferenceLayer(fake, r);
      for (const [i, n] of [9, 1, 1, 1, 2, 1, 1, 4, 1, 1, 1, 1, 1, 3, 1, 1].entries()) {
        const [k, v] = kv(n, 1000 * r + i);
        const [refK, refV] = reference.update(k, v);
        const out = layer.update(k, v);
        expect(out.key.shape).toEqual(refK.shape);
        expect(firstBitDifference(out.key.data, refK.data), `keys differ at update ${i}, R=${r}`).toBe(-1);
        expect(firstBitDifference(out.value.data, refV.data), `values differ at update ${i}, R=${r}`).toBe(-1);
      }
      layer.dispose();
    }
  });

  it('a flush quantizes dequant(store) ++ residual ++ new, not the original values (spec §3.5)', () => {
    const fake = new FakeGridQuantizer({ seqDependentGrid: true });
    const layer = track(new QuantizedLayer(fake, settings({ residualLength: 3 })));
    const [k0, v0] = kv(5, 1); // odd length: the grid shifts by half a step
    const [k1, v1] = kv(1, 2);
    const [k2, v2] = kv(1, 3);
    const [k3, v3] = kv(1, 4);
    layer.update(k0, v0);
    const storeBefore = kvTensor(k0.shape, k0.dtype, fake.roundTrip(k0));
    layer.update(k1, v1);
    layer.update(k2, v2);
    expect(layer.flushCount).toBe(0);
    const returned = layer.update(k3, v3); // residual 2, 2 + 1 >= 3: flush at step 3
    expect(layer.flushCount).toBe(1);

    const expectedInput = concatSeq([storeBefore, k1, k2, k3]);
    const flushInputK = fake.inputs[fake.inputs.length - 2]!;
    expect(flushInputK.shape).toEqual([1, 2, 8, 8]);
    expect(firstBitDifference(flushInputK.data, expectedInput.data)).toBe(-1);
    expect(firstBitDifference(returned.key.data, expectedInput.data)).toBe(-1);

    const storeAfter = (layer.stores.key as FakeQuantizedTensor).values;
    expect(firstBitDifference(storeAfter, fake.roundTrip(expectedInput))).toBe(-1);
    // Negative control: quantizing the original values would have given something else.
    const fromOriginals = fake.roundTrip(concatSeq([k0, k1, k2, k3]));
    expect(firstBitDifference(storeAfter, fromOriginals)).not.toBe(-1);

    // The next update returns the new store, dequantized, then the new token.
    const [k4, v4] = kv(1, 5);
    const next = layer.update(k4, v4);
    expect(firstBitDifference(next.key.data, concatSeq([kvTensor([1, 2, 8, 8], 'float32', storeAfter), k4]).data)).toBe(-1);
    layer.dispose();
  });

  it('quantizes keys along axisKey and values along axisValue, with the shared nbits and group size', () => {
    const fake = new FakeGridQuantizer();
    const layer = track(new QuantizedLayer(fake, settings({ nbits: 2, axisKey: 0, axisValue: -1, groupSize: 16, residualLength: 2 })));
    layer.update(...kv(4, 1));
    layer.update(...kv(1, 2));
    layer.update(...kv(1, 3)); // flush
    expect(layer.stores.key?.params).toEqual({ nbits: 2, axis: 0, groupSize: 16 });
    expect(layer.stores.value?.params).toEqual({ nbits: 2, axis: -1, groupSize: 16 });
    expect(fake.calls.quantize).toBe(4);
    layer.dispose();
  });

  it('dequantizes once per quantize call: between flushes the decode path reuses the cached history', () => {
    const fake = new FakeGridQuantizer();
    const layer = track(new QuantizedLayer(fake, settings({ residualLength: 16 })));
    layer.update(...kv(8, 1));
    const buffers = new Set<ArrayBufferLike>();
    for (let step = 1; step <= 100; step++) buffers.add(layer.update(...kv(1, step + 1)).key.data.buffer);
    expect(layer.flushCount).toBe(6); // steps 16, 32, …, 96
    expect(fake.calls.quantize).toBe(2 * 7);
    expect(fake.calls.dequantizeInto).toBe(2 * 7);
    expect(fake.calls.dequantize).toBe(0);
    // Two key buffers swap roles at flushes, plus a few growths: no per-step allocation.
    expect(buffers.size).toBeLessThanOrEqual(8);
    layer.dispose();
  });

  it('records error statistics of every quantize event, keys and values apart', () => {
    const fake = new FakeGridQuantizer({ seqDependentGrid: true });
    const layer = track(new QuantizedLayer(fake, settings({ residualLength: 2 })));
    const [k, v] = kv(3, 1);
    layer.update(k, v);
    layer.update(...kv(1, 2));
    layer.update(...kv(1, 3)); // flush at step 2
    const [prefill, flush] = layer.events;
    expect(prefill).toEqual({ step: 0, kind: 'prefill', tokens: 3, key: errorStats(k.data, fake.roundTrip(k)), value: errorStats(v.data, fake.roundTrip(v)) });
    const flushK = fake.inputs[2]!;
    const flushV = fake.inputs[3]!;
    expect(flush).toEqual({ step: 2, kind: 'flush', tokens: 5, key: errorStats(flushK.data, fake.roundTrip(flushK)), value: errorStats(flushV.data, fake.roundTrip(flushV)) });
    expect(prefill!.key.maxAbsErr).toBeGreaterThan(0);
    expect(prefill!.key.maxAbsErr).toBeLessThanOrEqual(1 / 16);
    expect(prefill!.key).not.toEqual(prefill!.value);
    layer.dispose();
  });
});

describe('QuantizedLayer memory accounting (spec §3.6)', () => {
  const shape = (n: number): KvShape => [1, 4, n, 64];
  const pair = (n: number, dtype: 'float16' | 'float32'): [KvTensor, KvTensor] => [randomTensor(shape(n), 1, dtype), randomTensor(shape(n), 2, dtype)];

  it('int4, g 64, fp16: 64·4 + 2·16 bits per 64 values = 4.5 bits/value, then the residual in fp16', () => {
    const layer = track(new QuantizedLayer(new FakeGridQuantizer(), settings({ nbits: 4, groupSize: 64 })));
    layer.update(...pair(16, 'float16'));
    let m = layer.memory();
    // per tensor: 4·16·64 = 4096 values → 2048 code bytes, 64 groups · (scale + zero) · 2 bytes = 256
    expect([m.codeBytes, m.metadataBytes, m.fullPrecisionBytes, m.totalBytes]).toEqual([4096, 512, 0, 4608]);
    expect(m.valueCount).toBe(8192);
    expect(bitsPerValue(m)).toBe(4.5);
    expect(m.fp16BaselineBytes).toBe(16384);
    expect(m.fp32BaselineBytes).toBe(32768);
    expect(m.fp16BaselineBytes / m.totalBytes).toBeCloseTo(3.56, 2);

    for (let i = 0; i < 3; i++) layer.update(...pair(1, 'float16'));
    m = layer.memory();
    // residual: 3 tokens · 4 heads · 64 dims · 2 (K, V) · 2 bytes = 3072
    expect([m.quantizedTokens, m.fullPrecisionTokens, m.fullPrecisionBytes, m.totalBytes]).toEqual([16, 3, 3072, 7680]);
    expect(m.fp16BaselineBytes).toBe(2 * 4 * 19 * 64 * 2);
    layer.dispose();
  });

  it('int2, g 64, fp16 = 2.5 bits/value; int4, g 64, fp32 = 5 bits/value; int4, g 32, fp16 = 5 bits/value', () => {
    const cases: [number, number, 'float16' | 'float32', number][] = [[2, 64, 'float16', 2.5], [4, 64, 'float32', 5], [4, 32, 'float16', 5]];
    for (const [nbits, groupSize, dtype, bits] of cases) {
      const layer = track(new QuantizedLayer(new FakeGridQuantizer(), settings({ nbits, groupSize })));
      layer.update(...pair(32, dtype));
      expect(bitsPerValue(layer.memory()), `${nbits} bits, g ${groupSize}, ${dtype}`).toBe(bits);
      layer.dispose();
    }
  });

  it('a flush moves the residual into the store', () => {
    const layer = track(new QuantizedLayer(new FakeGridQuantizer(), settings({ nbits: 4, groupSize: 64, residualLength: 2 })));
    layer.update(...pair(4, 'float32'));
    layer.update(...pair(1, 'float32'));
    expect(layer.memory().fullPrecisionBytes).toBe(2 * 4 * 64 * 4);
    layer.update(...pair(1, 'float32')); // flush
    const m = layer.memory();
    // 6 tokens · 256 values · 2 tensors = 3072 values: 1536 code bytes, 48 groups · 2 · 4 bytes = 384
    expect([m.quantizedTokens, m.codeBytes, m.metadataBytes, m.fullPrecisionBytes]).toEqual([6, 1536, 384, 0]);
    expect(m.workingBytes).toBeGreaterThan(0);
    layer.dispose();
  });
});

describe('QuantizedLayer contract', () => {
  it.each([
    ['reorder', (l: QuantizedLayer) => l.reorder([1, 0]), /reorder_cache \(beam search\).*quantized store keeps the old beam order/],
    ['crop', (l: QuantizedLayer) => l.crop(4), /crop: .*leaves the quantized store/],
    ['batchRepeatInterleave', (l: QuantizedLayer) => l.batchRepeatInterleave(2), /batch_repeat_interleave/],
    ['batchSelectIndices', (l: QuantizedLayer) => l.batchSelectIndices([0]), /batch_select_indices/],
    ['reset', (l: QuantizedLayer) => l.reset(), /reset: .*stale|reset: .*old quantized store/],
  ])('%s throws a CacheError explaining what transformers gets wrong (spec §1.4)', (_name, call, message) => {
    const layer = track(new QuantizedLayer(new FakeGridQuantizer(), settings()));
    layer.update(...kv(4, 1));
    expect(() => call(layer)).toThrow(CacheError);
    expect(() => call(layer)).toThrow(message);
    // what to do, in words the user can act on: no citation of kvscope's own reference documents
    expect(() => call(layer)).toThrow(/use a dynamic \(full-precision\) cache/);
    expect(() => call(layer)).not.toThrow(/§/);
    layer.dispose();
  });

  it('refuses a quantizer of another backend than the settings name', () => {
    expect(() => new QuantizedLayer(new FakeGridQuantizer({ backend: 'hqq' }), settings({ backend: 'quanto' })))
      .toThrow(/backend `quanto` but the quantizer given is `hqq`/);
  });

  it('after a quantizer failure, counts the tokens (bumped first) and refuses further updates, naming the cause', () => {
    const layer = track(new QuantizedLayer(new FakeGridQuantizer(), settings({ groupSize: 64 })));
    const [k, v] = kv(3, 1); // 48 values: group size 64 does not divide them
    expect(() => layer.update(k, v)).toThrow(QuantizationError);
    expect(layer.seqLength()).toBe(3);
    expect(() => layer.update(...kv(1, 2))).toThrow(/unusable: an earlier update failed inside the quanto quantizer \(Group size \(64\) must be a divisor of \(48\)\)/);
    layer.dispose();
  });

  it('refuses updates after dispose', () => {
    const layer = track(new QuantizedLayer(new FakeGridQuantizer(), settings()));
    layer.update(...kv(2, 1));
    layer.dispose();
    expect(layer.disposed).toBe(true);
    expect(layer.memory().totalBytes).toBe(0);
    expect(() => layer.update(...kv(1, 2))).toThrow(/disposed/);
  });
});
