import { afterAll, describe, expect, it } from 'vitest';
import { readModelFiles, openModelSession } from '../model/open-model.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { storiesDir, HQQ8 } from '../test-support/stories.js';
import { defaultEvalText } from '../../lab/default-text.js';
import { planWindows, scoredRows } from '../../lab/windows.js';
import { defaultWindowSettings } from '../../lab/eval-settings.js';
import { int64Tensor, floatTensor } from '../../engine/host-tensor.js';
import type { QuantizedCacheSettings } from '../../cache/cache-config.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { runEval } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';

const references = tempReferenceStore();

afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
  references.remove();
});

/** Per-token NLLs of one full-sequence teacher-forced pass per window, computed here from the raw logits. */
async function fullSequenceNll(windowCount: number): Promise<number[]> {
  const files = await readModelFiles(storiesDir());
  const windows = planWindows(files.tokenizer!.encode(defaultEvalText()), files.specialTokens.bosTokenId, { ...defaultWindowSettings(), maxWindows: windowCount });
  const model = await openModelSession(files, 'cpu');
  try {
    const nll: number[] = [];
    for (const window of windows) {
      const n = window.tokens.length;
      const feeds: Record<string, ReturnType<typeof int64Tensor>> = {
        input_ids: int64Tensor([1, n], BigInt64Array.from(window.tokens, BigInt)),
        attention_mask: int64Tensor([1, n], new BigInt64Array(n).fill(1n)),
        position_ids: int64Tensor([1, n], BigInt64Array.from({ length: n }, (_, i) => BigInt(i))),
      };
      for (const layer of model.io.kvLayers) {
        feeds[layer.pastKey] = floatTensor('float32', [1, 4, 0, 8], new Float32Array(0));
        feeds[layer.pastValue] = floatTensor('float32', [1, 4, 0, 8], new Float32Array(0));
      }
      const logits = (await model.session.run(feeds))['logits']!.data as Float32Array;
      const vocab = logits.length / n;
      for (let row = window.prefill; row < window.prefill + scoredRows(window); row++) {
        const values = logits.subarray(row * vocab, (row + 1) * vocab);
        let max = -Infinity;
        for (const v of values) max = Math.max(max, v);
        let sum = 0;
        for (const v of values) sum += Math.exp(v - max);
        nll.push(max + Math.log(sum) - values[window.tokens[row + 1]!]!);
      }
    }
    return nll;
  } finally {
    await model.dispose();
  }
}

describe('kvscope eval on stories260k with the default text', () => {
  it('the dynamic cache gives KLD exactly 0, top-1 agreement 1 and the PPL of one full-sequence teacher-forced pass', async () => {
    const result = await runEval(storiesEvalSettings({}, 3), { referenceStore: references.store, perToken: true });
    expect(result.windows.count).toBe(3);
    expect(result.summary.tokens).toBe(3 * 255);
    expect(result.perToken!.kld.every((k) => k === 0)).toBe(true);
    expect(result.summary.kld.max).toBe(0);
    expect(result.summary.top1Agreement).toBe(1);
    expect(result.summary.ppl).toBe(result.summary.pplReference);
    expect(result.summary.deltaPpl).toBe(0);
    const nll = await fullSequenceNll(3);
    const ppl = Math.exp(nll.reduce((a, b) => a + b, 0) / nll.length);
    expect(Math.abs(result.summary.ppl - ppl) / ppl).toBeLessThan(1e-12);
    expect(result.perToken!.nll.map((v, i) => Math.abs(v - nll[i]!))).toSatisfy((d: number[]) => d.every((x) => x < 1e-9));
    // The dynamic cache stores every token at full precision (fp32 graph): 512 tokens · 5 layers · 4 heads · 16 · 4 bytes.
    expect(result.memory.storedBytes).toBe(512 * 5 * 4 * 16 * 4);
    expect(result.memory.bitsPerValue).toBe(32);
  });

  it('reads the reference from the cache the second time, with the same figures', async () => {
    const first = await runEval(storiesEvalSettings({ cacheMode: 'quantized' }, 2), { referenceStore: references.store });
    const second = await runEval(storiesEvalSettings({ cacheMode: 'quantized' }, 2), { referenceStore: references.store });
    expect(second.reference.cached).toBe(true);
    expect(second.reference.key).toBe(first.reference.key);
    expect(second.summary).toEqual(first.summary);
  });

  // Tolerances: the two feedings are the same computation in float32 except the graph's own kernels
  // (a chunk's MatMul and masked softmax round differently from a row's), so the figures agree to float
  // noise. HQQ's optimizer amplifies that noise (its iterations move scale and zero by an ulp, and a
  // few codes flip): measured 1.4e-6 on PPL and 1.1e-4 on the 8-bit mean KLD, whose KLD is tiny.
  const quanto4: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 32 };
  it.each([
    ['quanto 4-bit g32 R32', quanto4, 1e-5, 1e-4],
    ['hqq 8-bit axis 1 g32 R32', HQQ8, 1e-3, 2e-3],
  ] as const)('%s: chunks ending at flush steps give what token-by-token feeding gives', async (_name, quantization, kldTolerance, nllTolerance) => {
    // On the host path, whose working buffers grow the same way under both feedings (the graph path's
    // residual buffers grow by the chunk; its figures are the host path's bit for bit: in-graph-eval.test.ts).
    const settings = storiesEvalSettings({ cacheMode: 'quantized', quantization, dequantize: 'host' }, 2);
    const chunked = await runEval(settings, { referenceStore: references.store, perToken: true });
    const single = await runEval({ ...settings, feed: 'token-by-token' }, { referenceStore: references.store, perToken: true });
    expect(chunked.feed).toBe('chunked');
    expect(single.timings.runs).toBe(2 * (1 + 256));
    expect(chunked.timings.runs).toBe(2 * (1 + 256 / 32));
    expect(chunked.flushCounts).toEqual(single.flushCounts);
    expect(chunked.flushCounts[0]).toBe(8);
    expect(chunked.memory.total).toEqual(single.memory.total);
    const relative = (a: number, b: number): number => Math.abs(a - b) / Math.abs(b);
    expect(relative(chunked.summary.ppl, single.summary.ppl)).toBeLessThan(1e-5);
    expect(relative(chunked.summary.kld.mean, single.summary.kld.mean)).toBeLessThan(kldTolerance);
    expect(Math.max(...chunked.perToken!.nll.map((v, i) => Math.abs(v - single.perToken!.nll[i]!)))).toBeLessThan(nllTolerance);
    expect(chunked.perToken!.top1).toEqual(single.perToken!.top1);
    expect(chunked.summary.kld.mean).toBeGreaterThan(0);
  });
});

describe('kvscope eval on an fp16-KV graph', () => {
  it('feeds token by token by default (a chunk would attend to unrounded K/V), and the dynamic cache still scores KLD 0', async () => {
    const quantized = await runEval(storiesEvalSettings({ cacheMode: 'quantized', quantization: HQQ8, onnxFile: 'onnx/model_fp16.onnx' }, 1), { referenceStore: references.store });
    expect(quantized.feed).toBe('token-by-token');
    expect(quantized.timings.runs).toBe(1 + 256);
    expect(quantized.summary.kld.mean).toBeGreaterThan(0);
    // HQQ 8-bit: within 1% of the reference PPL.
    expect(Math.abs(quantized.summary.pplRatio - 1)).toBeLessThan(0.01);
    const dynamic = await runEval(storiesEvalSettings({ onnxFile: 'onnx/model_fp16.onnx' }, 1), { referenceStore: references.store });
    expect(dynamic.summary.kld.max).toBe(0);
    expect(dynamic.summary.ppl).toBe(dynamic.summary.pplReference);
    expect(dynamic.reference.key).toBe(quantized.reference.key);
  });
});
