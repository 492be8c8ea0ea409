import { afterEach, describe, expect, it } from 'vitest';
import { errorStats } from '../quant/error-stats.js';
import { hadamardRotateRows, planHadamard, type HadamardPlan } from '../quant/hadamard.js';
import { quantizerFor } from '../quant/registry.js';
import type { QuantBackend } from '../quant/types.js';
import { roundToFloat16 } from '../tensor/float16.js';
import { kvTensor, type KvTensor } from '../tensor/kv-tensor.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from './cache-config.js';
import type { CacheExtensions } from './cache-extensions.js';
import { planLayerQuantization } from './quantization-plan.js';
import { QuantizedLayer } from './quantized-layer.js';
import { firstBitDifference } from './test-support/compare.js';
import { trackDisposables } from './test-support/disposables.js';
import { concatSeq, randomTensor, sliceSeq } from './test-support/tensors.js';

const track = trackDisposables();
const created: QuantizedLayer[] = [];
// Runs before the leak check (hooks run in reverse order): these tests only read the layers.
afterEach(() => {
  for (const layer of created.splice(0)) layer.dispose();
});

const BASE: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 8, residualLength: 5 };

function settings(backend: QuantBackend, extensions?: CacheExtensions, overrides: Partial<QuantizedCacheSettings> = {}): QuantizedCacheSettings {
  const axes = backend === 'hqq' ? { axisKey: 1, axisValue: 0 } : { axisKey: 0, axisValue: 0 };
  return { ...BASE, backend, nbits: backend === 'hqq' ? 4 : 2, ...axes, ...overrides, ...(extensions !== undefined ? { extensions } : {}) };
}

function layerOf(s: QuantizedCacheSettings): QuantizedLayer {
  const quantizer = quantizerFor(s.backend as QuantBackend);
  const plan = s.extensions === undefined ? undefined : planLayerQuantization(s, 0, 1);
  const layer = track(plan === null || plan === undefined ? new QuantizedLayer(quantizer, s) : new QuantizedLayer(quantizer, s, plan));
  created.push(layer);
  return layer;
}

/** [1, 2, n, 8] keys and values. */
function kv(n: number, seed: number): [KvTensor, KvTensor] {
  return [randomTensor([1, 2, n, 8], seed), randomTensor([1, 2, n, 8], seed + 7919)];
}

/** A prefill of `prompt` tokens then `steps` single-token updates; returns what each update gave back. */
function drive(layer: QuantizedLayer, prompt: number, steps: number, seed = 11): { keys: Float32Array[]; values: Float32Array[]; inputs: KvTensor[] } {
  const keys: Float32Array[] = [];
  const values: Float32Array[] = [];
  const inputs: KvTensor[] = [];
  for (let step = 0; step <= steps; step++) {
    const [k, v] = kv(step === 0 ? prompt : 1, seed + step);
    inputs.push(k);
    const out = layer.update(k, v);
    keys.push(out.key.data.slice());
    values.push(out.value.data.slice());
  }
  return { keys, values, inputs };
}

describe('kvscope extensions at their neutral settings are transformers\' QuantizedLayer, bit for bit', () => {
  it.each(['quanto', 'hqq'] as const)('%s: K/V bits equal to nbits, 0 sink tokens, a layer map equal to the global bits', (backend) => {
    const plain = settings(backend);
    const nbits = plain.nbits;
    const neutral = settings(backend, { nbitsKey: nbits, nbitsValue: nbits, sinkTokens: 0, layerMap: [{ layer: 0, nbitsKey: nbits, nbitsValue: nbits }] });
    // the neutral settings really take the extensions' codec
    expect(planLayerQuantization(neutral, 0, 1)!.key.extensions).not.toBeNull();
    const a = layerOf(plain);
    const b = layerOf(neutral);
    const ra = drive(a, 7, 23);
    const rb = drive(b, 7, 23);
    for (let i = 0; i < ra.keys.length; i++) {
      expect(firstBitDifference(rb.keys[i]!, ra.keys[i]!)).toBe(-1);
      expect(firstBitDifference(rb.values[i]!, ra.values[i]!)).toBe(-1);
    }
    expect(b.events).toEqual(a.events);
    expect(b.memory()).toEqual(a.memory());
    expect(b.memory().extensions).toBeUndefined();
    expect(Array.from(b.stores.key!.packed)).toEqual(Array.from(a.stores.key!.packed));
  });
});

describe('K and V bits apart', () => {
  it('quantizes keys and values with their own bits, and counts each side\'s codes and metadata', () => {
    const s = settings('hqq', { nbitsKey: 8, nbitsValue: 2 }, { axisKey: 0, axisValue: 0 });
    const layer = layerOf(s);
    drive(layer, 8, 0);
    const { key, value } = layer.stores;
    expect(key!.params.nbits).toBe(8);
    expect(value!.params.nbits).toBe(2);
    // 1·2·8·8 = 128 values per side, groups of 8 → 16 groups, scale + zero in float32
    const memory = layer.memory();
    expect(memory.codeBytes).toBe(128 * 8 / 8 + 128 * 2 / 8);
    expect(memory.metadataBytes).toBe(2 * (16 * 2 * 4));
    expect(memory.totalBytes).toBe(128 + 32 + 256);
  });
});

describe('attention sinks (--sink-tokens)', () => {
  it('keeps the first S tokens exact through every flush and never re-quantizes them', () => {
    const layer = layerOf(settings('quanto', { sinkTokens: 4 }));
    const run = drive(layer, 10, 17);
    const prompt = run.inputs[0]!;
    const exactSink = sliceSeq(prompt, 0, 4);
    // after the prefill every update returns [sink | deq(dense) | residual | new]; the sink is exact each time
    for (let i = 1; i < run.keys.length; i++) {
      const seq = 10 + i;
      const returned = kvTensor([1, 2, seq, 8], 'float32', run.keys[i]!);
      expect(firstBitDifference(sliceSeq(returned, 0, 4).data, exactSink.data)).toBe(-1);
    }
    // 17 steps at R = 5: flushes at updates 5, 10, 15
    expect(layer.flushCount).toBe(3);
    const encoded = layer.encoded.key!;
    expect(encoded.sinkTokens).toBe(4);
    expect(encoded.store!.shape).toEqual([1, 2, 25 - 4, 8]);
    // the tokens right after the sink were quantized: not exact any more
    const last = kvTensor([1, 2, 27, 8], 'float32', run.keys.at(-1)!);
    expect(firstBitDifference(sliceSeq(last, 4, 10).data, sliceSeq(prompt, 4, 10).data)).not.toBe(-1);
  });

  it('fills the sink from the residual when the prompt is shorter than S', () => {
    const layer = layerOf(settings('quanto', { sinkTokens: 6 }));
    const run = drive(layer, 2, 5);
    // prefill of 2: all sink, no store; the flush at update 5 covers 7 tokens: 6 sink rows + 1 quantized
    expect(layer.encoded.key).toMatchObject({ tokens: 7, sinkTokens: 6 });
    expect(layer.encoded.key!.store!.shape).toEqual([1, 2, 1, 8]);
    const exact = concatSeq(run.inputs.slice(0, 5));
    const returned = kvTensor([1, 2, 7, 8], 'float32', run.keys[5]!);
    expect(firstBitDifference(sliceSeq(returned, 0, 6).data, sliceSeq(exact, 0, 6).data)).toBe(-1);
  });

  it('counts the sink rows as full-precision bytes, by hand', () => {
    const layer = layerOf(settings('quanto', { sinkTokens: 4 }));
    drive(layer, 10, 2); // prefill 10, two appends: sink 4, dense 6, residual 2
    const memory = layer.memory();
    // K and V: 1·2·4·8 values each in float32
    expect(memory.extensions).toEqual({ sinkTokens: 4, sinkBytes: 2 * (2 * 4 * 8 * 4), outliers: 0, outlierIndexBytes: 0, outlierValueBytes: 0 });
    expect(memory).toMatchObject({ tokens: 12, quantizedTokens: 6, fullPrecisionTokens: 6 });
    expect(memory.fullPrecisionBytes).toBe(2 * (2 * 6 * 8 * 4));
    // quanto 2-bit, 6 dense tokens: 96 values per side → 24 bytes of codes each
    expect(memory.codeBytes).toBe(2 * 24);
    expect(memory.totalBytes).toBe(memory.codeBytes + memory.metadataBytes + memory.fullPrecisionBytes);
  });
});

function hadamard8(): HadamardPlan {
  const plan = planHadamard(8);
  if ('refused' in plan) throw new Error(plan.refused);
  return plan;
}

describe('rotation (--rotate hadamard)', () => {
  it('stores codes of the rotated keys, returns unrotated values, and measures the error on the unrotated tensor', () => {
    const s = settings('hqq', { rotation: 'hadamard' }, { nbits: 2, axisKey: 0, axisValue: 0 });
    const layer = layerOf(s);
    const [k, v] = kv(8, 5);
    layer.update(k, v);
    const event = layer.events[0]!;
    expect(layer.encoded.key!.rotation).toEqual({ kind: 'hadamard', block: 8 });
    expect(layer.encoded.value!.rotation).toBeNull();
    // by hand: rotate, quantize with the backend, dequantize, rotate back
    const quantizer = quantizerFor('hqq');
    const rotated = new Float32Array(k.data.length);
    hadamardRotateRows(hadamard8(), k.data, rotated, 16, 'float32');
    const store = quantizer.quantize(kvTensor(k.shape, 'float32', rotated), { nbits: 2, axis: 0, groupSize: 8 });
    expect(Array.from(layer.stores.key!.packed)).toEqual(Array.from(store.packed));
    const dequantized = quantizer.dequantize(store).data;
    const back = new Float32Array(dequantized.length);
    hadamardRotateRows(hadamard8(), dequantized, back, 16, 'float32');
    expect(event.key).toEqual(errorStats(k.data, back));
    // the rotated domain's error is a different statistic (max and mean abs differ; the Frobenius norm does not)
    const rotatedError = errorStats(rotated, dequantized);
    expect(event.key.maxAbsErr).not.toBe(rotatedError.maxAbsErr);
    expect(event.key.relFroErr).toBeCloseTo(rotatedError.relFroErr, 5);
    // the values were not rotated: the plain path's error
    expect(event.value).toEqual(errorStats(v.data, quantizer.dequantize(quantizer.quantize(v, { nbits: 2, axis: 0, groupSize: 8 })).data));
    // what the next step sees is the un-rotated reconstruction
    expect(firstBitDifference(layer.dequantizedStore('key')!.data, back)).toBe(-1);
  });

  it('keeps float16 tensors binary16-exact after rotating back (the lane feeds them to fp16 graphs as bits)', () => {
    const layer = layerOf(settings('quanto', { rotation: 'hadamard', rotateValues: true, outlierQuantile: 0.95, sinkTokens: 2 }, { nbits: 4 }));
    const [k, v] = kv(8, 21);
    layer.update(kvTensor(k.shape, 'float16', k.data), kvTensor(v.shape, 'float16', v.data));
    for (const part of ['key', 'value'] as const) {
      const values = layer.dequantizedStore(part)!.data;
      for (const value of values) expect(roundToFloat16(value)).toBe(value);
    }
  });

  it('rotates the values too with --rotate-values', () => {
    const layer = layerOf(settings('quanto', { rotation: 'hadamard', rotateValues: true }));
    drive(layer, 8, 0);
    expect(layer.encoded.value!.rotation).toEqual({ kind: 'hadamard', block: 8 });
  });
});

describe('outliers (--outliers Q)', () => {
  it('keeps ⌊(1 − Q)·n⌋ values per side exactly and counts 4 + bytes(T) bytes for each, by hand', () => {
    const layer = layerOf(settings('quanto', { outlierQuantile: 0.9 }));
    const run = drive(layer, 10, 0);
    // 1·2·10·8 = 160 values per side → 16 outliers each
    const key = layer.encoded.key!;
    expect(key.outliers!.indices.length).toBe(16);
    const returned = layer.dequantizedStore('key')!.data;
    for (const index of key.outliers!.indices) expect(returned[index]).toBe(run.inputs[0]!.data[index]);
    const memory = layer.memory();
    expect(memory.extensions).toEqual({ sinkTokens: 0, sinkBytes: 0, outliers: 32, outlierIndexBytes: 32 * 4, outlierValueBytes: 32 * 4 });
    // 160 values at 2 bits = 40 bytes of codes per side
    expect(memory.codeBytes).toBe(80);
    expect(memory.fullPrecisionBytes).toBe(32 * 4);
    expect(memory.metadataBytes).toBe(32 * 4 + layer.stores.key!.scale.length * 8 + layer.stores.value!.scale.length * 8);
  });

  it('lowers the error of a tensor with a few large values', () => {
    const [k, v] = kv(8, 9);
    for (const i of [3, 50, 101]) k.data[i] = 40;
    const plain = layerOf(settings('quanto'));
    const sparse = layerOf(settings('quanto', { outlierQuantile: 0.97 }));
    plain.update(k, v);
    sparse.update(k, v);
    expect(sparse.events[0]!.key.relFroErr).toBeLessThan(plain.events[0]!.key.relFroErr / 2);
  });
});
