import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { InGraphSideSpec, UnpackStrategy } from '../../onnx/rewrite/in-graph-spec.js';
import { hasShared, sharedDir } from '../golden.js';
import { releaseCachedSessions } from '../ort/session-cache.js';
import { ensureSyntheticModel } from '../synthetic/ensure-synthetic-model.js';
import { runParity, type ParityCase } from '../test-support/in-graph-parity.js';

type Side = Omit<InGraphSideSpec, 'kvHeads' | 'headDim'>;

/** Every backend, bit width, axis and group size of ../shared/golden (golden/README.md: 54 cases over 30 settings). */
const GOLDEN_SETTINGS: readonly Side[] = [
  ...[2, 4].flatMap((nbits) => [0, -1].flatMap((axis) => [32, 64, 128].map((groupSize): Side => ({ backend: 'quanto', nbits, axis, groupSize })))),
  ...[2, 4, 8].flatMap((nbits) => [0, 1].flatMap((axis) => [32, 64, 128].map((groupSize): Side => ({ backend: 'hqq', nbits, axis, groupSize })))),
];

/** Settings spread over a graph's layers, keys and values apart: `layers` layers take 2·layers settings at a time. */
function layerSides(settings: readonly Side[], layers: number): { key: Side; value: Side }[][] {
  const graphs: { key: Side; value: Side }[][] = [];
  for (let start = 0; start < settings.length; start += 2 * layers) {
    graphs.push(Array.from({ length: layers }, (_, i) => ({
      key: settings[(start + 2 * i) % settings.length]!,
      value: settings[(start + 2 * i + 1) % settings.length]!,
    })));
  }
  return graphs;
}

const stories = hasShared() ? join(sharedDir(), 'models', 'stories260k', 'onnx') : '';
const genaiLlama = hasShared() ? join(sharedDir(), 'models', 'ort-genai-tiny', 'llama-fp16', 'model.onnx') : '';

function expectIdentical(result: Awaited<ReturnType<typeof runParity>>, what: string): void {
  expect(result.logitDifferences, `${what}: logits elements with other bits (of ${result.logitCount})`).toBe(0);
  expect(result.newRowDifferences, `${what}: new-row elements with other bits`).toBe(0);
}

describe.skipIf(!hasShared())('the rewritten graph and the source agree bit for bit on the same inputs (STYLE.md §16)', () => {
  afterAll(() => releaseCachedSessions());

  for (const dtype of ['float32', 'float16'] as const) {
    for (const unpack of ['bitwise', 'arithmetic'] as UnpackStrategy[]) {
      it(`stories260k ${dtype === 'float32' ? 'model.onnx' : 'model_fp16.onnx'}, ${unpack} unpacking: all 30 golden settings, 64 stored rows + 3 residual`, async () => {
        for (const [index, sides] of layerSides(GOLDEN_SETTINGS, 5).entries()) {
          const c: ParityCase = {
            modelPath: join(stories, dtype === 'float32' ? 'model.onnx' : 'model_fp16.onnx'),
            dtype, kvHeads: 4, headDim: 8, sides, prefill: 64, residual: 3, unpack, vocabSize: 512,
          };
          const result = await runParity(c);
          expectIdentical(result, `graph ${index}: ${sides.map((s) => `${s.key.backend}${s.key.nbits}/${s.key.axis}/${s.key.groupSize}+${s.value.backend}${s.value.nbits}/${s.value.axis}/${s.value.groupSize}`).join(', ')}`);
          expect(result.gated.every(Boolean)).toBe(true);
          // an HF export: MatMul(weights, repeat_kv(values)) through Unsqueeze, Expand, Reshape
          expect(result.valuesAfterKeys.every(Boolean)).toBe(true);
        }
      }, 120_000);
    }
  }

  it('stories260k: quanto\'s padded byte rows (63 stored rows: an odd number of 4-bit grid rows), HQQ 8-bit, an empty residual', async () => {
    const sides: Side[] = [
      { backend: 'quanto', nbits: 4, axis: 0, groupSize: 32 }, { backend: 'quanto', nbits: 2, axis: 0, groupSize: 32 },
      { backend: 'hqq', nbits: 8, axis: 1, groupSize: 32 }, { backend: 'hqq', nbits: 8, axis: 0, groupSize: 32 },
    ];
    for (const unpack of ['bitwise', 'arithmetic'] as UnpackStrategy[]) {
      for (const residual of [0, 5]) {
        const result = await runParity({
          modelPath: join(stories, 'model.onnx'), dtype: 'float32', kvHeads: 4, headDim: 8,
          sides: layerSides(sides, 5)[0]!, prefill: 63, residual, unpack, vocabSize: 512,
        });
        expectIdentical(result, `${unpack}, residual ${residual}`);
      }
    }
  }, 60_000);

  // axis 0 only: HQQ itself cannot dequantize 3-bit axis 1 on a 4-D KV tensor (the host refuses it, quant/hqq)
  it('stories260k: HQQ 3-bit, its int32 words crossing as an int32 tensor (grid rows 16, 32, 64 padded to ten per word), both dtypes', async () => {
    const sides: Side[] = [
      { backend: 'hqq', nbits: 3, axis: 0, groupSize: 16 }, { backend: 'hqq', nbits: 3, axis: 0, groupSize: 32 },
      { backend: 'hqq', nbits: 3, axis: 0, groupSize: 64 }, { backend: 'hqq', nbits: 4, axis: 1, groupSize: 32 },
      { backend: 'hqq', nbits: 3, axis: 0, groupSize: 128 }, { backend: 'quanto', nbits: 2, axis: 0, groupSize: 32 },
    ];
    for (const dtype of ['float32', 'float16'] as const) {
      for (const unpack of ['bitwise', 'arithmetic'] as UnpackStrategy[]) {
        const result = await runParity({
          modelPath: join(stories, dtype === 'float32' ? 'model.onnx' : 'model_fp16.onnx'), dtype, kvHeads: 4, headDim: 8,
          sides: layerSides(sides, 5)[0]!, prefill: 64, residual: 3, unpack, vocabSize: 512,
        });
        expectIdentical(result, `hqq 3-bit ${dtype} ${unpack}`);
      }
    }
  }, 60_000);

  it('the synthetic model (kvHeads·headDim 256 > g: quanto through DequantizeLinear), all 8 layers, mixed settings', async () => {
    const folder = await ensureSyntheticModel('synthetic');
    const sides = layerSides([
      { backend: 'quanto', nbits: 4, axis: 0, groupSize: 64 }, { backend: 'quanto', nbits: 2, axis: 0, groupSize: 128 },
      { backend: 'quanto', nbits: 4, axis: -1, groupSize: 32 }, { backend: 'hqq', nbits: 4, axis: 1, groupSize: 64 },
      { backend: 'hqq', nbits: 8, axis: 0, groupSize: 128 }, { backend: 'hqq', nbits: 2, axis: 1, groupSize: 32 },
      { backend: 'quanto', nbits: 2, axis: -1, groupSize: 64 }, { backend: 'hqq', nbits: 4, axis: 0, groupSize: 32 },
    ], 8)[0]!;
    const result = await runParity({
      modelPath: join(folder, 'onnx', 'model.onnx'), dtype: 'float32', kvHeads: 4, headDim: 64, sides, prefill: 96, residual: 7, unpack: 'bitwise', vocabSize: 512,
    });
    expectIdentical(result, 'synthetic');
    expect(result.valuesAfterKeys).toEqual(Array(8).fill(true));
  }, 120_000);

  it.skipIf(!existsSync(genaiLlama))('an ONNX Runtime GenAI model-builder graph (MultiHeadAttention, fp16 KV, opset 14): the present is sliced past the history', async () => {
    const sides = layerSides([
      { backend: 'quanto', nbits: 4, axis: 0, groupSize: 32 }, { backend: 'hqq', nbits: 4, axis: 1, groupSize: 16 },
      { backend: 'quanto', nbits: 2, axis: -1, groupSize: 32 }, { backend: 'hqq', nbits: 8, axis: 0, groupSize: 64 },
    ], 2)[0]!;
    for (const unpack of ['bitwise', 'arithmetic'] as UnpackStrategy[]) {
      const result = await runParity({
        modelPath: genaiLlama, dtype: 'float16', kvHeads: 1, headDim: 16, sides, prefill: 64, residual: 2, unpack, vocabSize: 32_000,
      });
      expectIdentical(result, `llama-fp16 ${unpack}`);
      expect(result.gated).toEqual([true, true]);
      // one fused node takes keys and values: nothing in between to wait for
      expect(result.valuesAfterKeys).toEqual([false, false]);
    }
  }, 60_000);
});
