import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import { KvCache } from '../cache/kv-cache.js';
import { quantizerFor } from '../quant/registry.js';
import type { QuantBackend } from '../quant/types.js';
import { kvTensor } from '../tensor/kv-tensor.js';
import { readDecoderIo } from './decoder-io.js';
import { generate, type GenerateRequest } from './generate.js';
import type { RunSettings } from './types.js';
import { TOY, ToyDecoder, toyConfig, type ToyOptions } from './test-support/toy-decoder.js';

const QUANTO4: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'quanto', nbits: 4, axisKey: 0, axisValue: 0, groupSize: 8, residualLength: 3 };
// Axis 0 packs along the group (8 rows), so 2-bit packing fits every sequence length (spec §3.2 step 4).
const HQQ2: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 2, axisKey: 0, axisValue: 0, groupSize: 8, residualLength: 0 };

function settings(overrides: Partial<RunSettings> = {}): RunSettings {
  return {
    model: 'toy', executionProvider: 'cpu', cacheMode: 'dynamic', quantization: QUANTO4, prompt: 'toy', maxNewTokens: 24,
    sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false, ...overrides,
  };
}

function request(session: ToyDecoder, overrides: Partial<GenerateRequest> = {}): GenerateRequest {
  const io = readDecoderIo(session.inputs, session.outputs, 'toy.onnx').io!;
  return {
    session, io, config: toyConfig(), settings: settings(), promptTokenIds: [1, 5, 9, 3, 7], eosTokenIds: [],
    decodeText: (ids) => ids.map((id) => String.fromCharCode(97 + id)).join(''), now: () => performance.now(), ...overrides,
  };
}

function toy(options: ToyOptions = {}): ToyDecoder {
  return new ToyDecoder(options);
}

describe('generate: what attention sees (spec §1.3)', () => {
  it.each([
    ['quanto 4-bit R=3, fp32 KV', QUANTO4, 'float32'],
    ['quanto 4-bit R=3, fp16 KV', QUANTO4, 'float16'],
    ['hqq 2-bit R=0 (flush every 2nd step), fp32 KV', HQQ2, 'float32'],
    ['hqq 2-bit R=0, fp16 KV', HQQ2, 'float16'],
  ] as const)('%s: every run attends to exactly what QuantizedLayer.update returns in transformers', async (_name, quantization, kvDtype) => {
    const session = toy({ kvDtype });
    const outcome = await generate(request(session, { settings: settings({ cacheMode: 'quantized', quantization }) }));
    // Replay transformers' order: per step and layer, update(k_new) and attend to its return value.
    const reference = new KvCache({ plan: ['quantized', 'quantized'], settings: quantization, quantizer: quantizerFor(quantization.backend as QuantBackend) });
    for (const [step, run] of session.runs.entries()) {
      const n = run.inputIds.length;
      for (let layer = 0; layer < TOY.layers; layer++) {
        const shape = [1, TOY.kvHeads, n, TOY.headDim] as const;
        const { key, value } = reference.update(layer, kvTensor(shape, kvDtype, run.newRows[layer]!.key), kvTensor(shape, kvDtype, run.newRows[layer]!.value));
        expect(run.attended[layer]!.key, `step ${step} layer ${layer} keys`).toEqual(key.data);
        expect(run.attended[layer]!.value, `step ${step} layer ${layer} values`).toEqual(value.data);
      }
    }
    const decodeSteps = session.runs.length - 1;
    expect(outcome.flushCounts).toEqual([0, 0].map(() => Math.floor(decodeSteps / Math.max(quantization.residualLength, 2))));
    expect([0, 1].map((layer) => reference.layer(layer)!.flushCount)).toEqual(outcome.flushCounts);
    reference.dispose();
  });

  it('a dynamic run feeds the exact history back (present → past)', async () => {
    for (const kvDtype of ['float32', 'float16'] as const) {
      const session = toy({ kvDtype });
      await generate(request(session));
      const last = session.runs.at(-1)!;
      const all = session.runs.map((run) => run.newRows[1]!.key);
      // Head 0's rows in order: the concatenation of every run's new head-0 rows.
      const head0 = all.flatMap((rows) => [...rows.subarray(0, rows.length / TOY.kvHeads)]);
      expect([...last.attended[1]!.key.subarray(0, head0.length)]).toEqual(head0);
    }
  });
});

describe('generate: hybrid states', () => {
  it('feeds zeros first, then each present state back as the next past, in both cache modes', async () => {
    for (const cacheMode of ['dynamic', 'quantized'] as const) {
      const session = toy({ convState: true });
      await generate(request(session, { settings: settings({ cacheMode, maxNewTokens: 6 }) }));
      expect(session.runs.map((run) => [...run.convState!])).toEqual([0, 1, 2, 3, 4, 5].map((t) => [t, t, t]));
    }
  });
});

describe('generate: stopping', () => {
  it('stops on any EOS id, the EOS token included', async () => {
    const first = await generate(request(toy()));
    const eos = first.generatedTokenIds[6]!;
    const stopAt = first.generatedTokenIds.indexOf(eos);
    const stopped = await generate(request(toy(), { eosTokenIds: [999, eos] }));
    expect(stopped.stopReason).toBe('eos');
    expect(stopped.generatedTokenIds).toEqual(first.generatedTokenIds.slice(0, stopAt + 1));
  });

  it('stops at maxNewTokens, running the model once per token', async () => {
    const session = toy();
    const outcome = await generate(request(session, { settings: settings({ maxNewTokens: 5 }) }));
    expect(outcome.stopReason).toBe('max-new-tokens');
    expect(outcome.generatedTokenIds).toHaveLength(5);
    expect(session.runs).toHaveLength(5);
    expect(outcome.timings.decodeTokens).toBe(4);
    expect(outcome.steps.map((s) => s.seqLength)).toEqual([5, 6, 7, 8, 9]);
  });

  it('cancellation takes effect before the next step', async () => {
    let cancelled = false;
    const session = toy({ onRun: (index) => { if (index === 3) cancelled = true; } });
    const outcome = await generate(request(session, { observer: { isCancelled: () => cancelled } }));
    expect(outcome.stopReason).toBe('cancelled');
    expect(session.runs).toHaveLength(4);
    expect(outcome.generatedTokenIds).toHaveLength(4);
  });
});

describe('generate: metrics and the reference lane', () => {
  it('reports per-step metrics, streamed text and flush events', async () => {
    const steps: number[] = [];
    let text = '';
    const outcome = await generate(request(toy(), {
      settings: settings({ cacheMode: 'quantized' }),
      observer: { onStep: (m) => steps.push(m.step), onText: (delta) => { text += delta; } },
      sampleMemory: () => ({ rssBytes: 1, externalBytes: 2, arrayBuffersBytes: 3 }),
    }));
    expect(steps).toEqual(outcome.steps.map((s) => s.step));
    expect(text).toBe(outcome.text);
    const [prefill, second] = outcome.steps;
    expect(prefill!.flushes).toHaveLength(2);
    expect(prefill!.flushes[0]).toMatchObject({ layer: 0, kind: 'prefill', tokens: 5 });
    expect(prefill!.materializedKvBytes).toBe(0);
    // Step 1 feeds deq(prefill store): 5 tokens × 2 heads × 4 dims × K,V × 2 layers × 4 bytes.
    expect(second!.materializedKvBytes).toBe(5 * 2 * 4 * 2 * 2 * 4);
    expect(second!.memory).toEqual({ rssBytes: 1, externalBytes: 2, arrayBuffersBytes: 3 });
    expect(outcome.steps[3]!.flushes.map((f) => f.kind)).toEqual(['flush', 'flush']);
    for (const step of outcome.steps) {
      expect(step.timings.totalMs).toBeGreaterThanOrEqual(step.timings.modelMs);
      expect(step.kvBytes).toHaveLength(2);
    }
    expect(outcome.layerErrors[0]).toMatchObject({ layer: 0 });
    expect(outcome.kvBytesTotal.tokens).toBe(2 * outcome.steps.at(-1)!.seqLength);
  });

  it('the reference lane: zero KL for a dynamic run, measurable KL and divergence for 2-bit', async () => {
    const exact = await generate(request(toy(), { settings: settings({ reference: true }) }));
    expect(exact.reference).toEqual({ steps: 24, meanKl: 0, maxKl: 0, top1Agreement: 1, firstDivergenceStep: null });
    const lossy = await generate(request(toy(), { settings: settings({ reference: true, cacheMode: 'quantized', quantization: HQQ2 }) }));
    expect(lossy.reference!.maxKl).toBeGreaterThan(0);
    expect(lossy.steps[0]!.reference).toMatchObject({ klDivergence: 0, top1Agrees: true });
    const disagreements = lossy.steps.filter((s) => !s.reference!.top1Agrees).map((s) => s.step);
    expect(lossy.reference!.firstDivergenceStep).toBe(disagreements[0] ?? null);
    expect(lossy.reference!.top1Agreement).toBeCloseTo(1 - disagreements.length / 24, 10);
  });
});

describe('generate: refusals', () => {
  it('refuses what the preflight refuses, with transformers\' message', async () => {
    const quantization = { ...QUANTO4, nbits: 3 };
    await expect(generate(request(toy(), { settings: settings({ cacheMode: 'quantized', quantization }) }))).rejects.toMatchObject({
      name: 'PreflightRefusedError',
      message: expect.stringContaining('`nbits` for `quanto` backend has to be one of [`2`, `4`] but got 3'),
      diagnostics: expect.arrayContaining([expect.objectContaining({ code: 'invalid-nbits', severity: 'error' })]),
    });
  });

  it('refuses an empty prompt and a bad maxNewTokens', async () => {
    await expect(generate(request(toy(), { promptTokenIds: [] }))).rejects.toMatchObject({ name: 'GenerationError' });
    await expect(generate(request(toy(), { settings: settings({ maxNewTokens: 0 }) }))).rejects.toThrow(/maxNewTokens must be a positive integer/);
  });

  it('refuses sampling with temperature 0 using transformers\' message', async () => {
    const sampling = { greedy: false, temperature: 0, topK: 0, topP: 1, seed: 1 };
    await expect(generate(request(toy(), { settings: settings({ sampling }) }))).rejects.toThrow(/`temperature` \(=0\) has to be a strictly positive float/);
  });
});

describe('generate: dead outputs are released at once (output-release.ts)', () => {
  const cases = [
    ['dynamic, fp32', 'dynamic', 'float32', QUANTO4, false],
    ['dynamic + reference, fp16', 'dynamic', 'float16', QUANTO4, true],
    ['quanto R=3 + reference, fp32', 'quantized', 'float32', QUANTO4, true],
    ['quanto R=3, fp16', 'quantized', 'float16', QUANTO4, false],
    ['hqq 2-bit R=0 + reference, fp32', 'quantized', 'float32', HQQ2, true],
  ] as const;
  it.each(cases)('%s: every output released exactly once, none read or fed after release, same result', async (_name, cacheMode, kvDtype, quantization, reference) => {
    const runSettings = settings({ cacheMode, quantization, reference, maxNewTokens: 12 });
    for (const convState of [false, true]) {
      const plain = await generate(request(toy({ kvDtype, convState }), { settings: runSettings }));
      const releasing = toy({ kvDtype, convState, release: true });
      const outcome = await generate(request(releasing, { settings: runSettings }));
      // Released outputs are poisoned with NaN: any later read would change tokens, errors or KL.
      expect(outcome.generatedTokenIds).toEqual(plain.generatedTokenIds);
      expect(outcome.flushCounts).toEqual(plain.flushCounts);
      expect(outcome.layerErrors).toEqual(plain.layerErrors);
      expect(outcome.reference).toEqual(plain.reference);
      expect(outcome.steps.map((s) => s.kvBytes)).toEqual(plain.steps.map((s) => s.kvBytes));
      expect(releasing.released.size).toBe(releasing.returned.size);
    }
  });

  it('releases a step\'s outputs before the next run, except the pasts it will feed', async () => {
    const session = toy({ release: true });
    const pendingAtRun: number[] = [];
    const counting = Object.assign(Object.create(session) as ToyDecoder, {
      run: async (feeds: Parameters<ToyDecoder['run']>[0]) => {
        pendingAtRun.push(session.returned.size - session.released.size);
        return session.run(feeds);
      },
    });
    await generate(request(counting, { settings: settings({ maxNewTokens: 6 }) }));
    // Before each decode run only the 4 presents fed as past are alive (logits released).
    expect(pendingAtRun).toEqual([0, 4, 4, 4, 4, 4]);
  });
});
