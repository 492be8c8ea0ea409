import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import { decodeModel, encodeModel } from '../onnx/onnx-model.js';
import { keepLogitsRows } from '../onnx/rewrite/logits-rows.js';
import { hasShared } from './golden.js';
import { releaseCachedSessions } from './ort/session-cache.js';
import { runGeneration } from './run-generation.js';
import { copyOfStories, storiesSettings } from './test-support/stories.js';

afterAll(() => releaseCachedSessions());

/**
 * A run on a graph that computes the last row's logits only (num_logits_to_keep, fed 1 by StepInputs,
 * the prompt's prefill included) is the run on the graph that computes every row: the same ids and the
 * same reference figures, on both dequantize paths (issue 23, point 4).
 */
describe.skipIf(!hasShared())('kvscope run on a graph with num_logits_to_keep', () => {
  it('gives stories260k\'s ids and reference bit for bit, the prompt\'s prefill and every step computing one logits row', async () => {
    const copy = copyOfStories();
    try {
      const path = join(copy.dir, 'onnx', 'model.onnx');
      const rewritten = keepLogitsRows(decodeModel(readFileSync(path)));
      expect(rewritten.graph!.input.map((input) => input.name)).toContain('num_logits_to_keep');
      writeFileSync(path, encodeModel(rewritten));
      const quantization = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 16 };
      for (const dequantize of ['graph', 'host'] as const) {
        const settings = { cacheMode: 'quantized' as const, quantization, dequantize, prompt: 'Once upon a time there was', maxNewTokens: 40, reference: true };
        const source = await runGeneration(storiesSettings(settings));
        const lastRow = await runGeneration(storiesSettings({ ...settings, model: copy.dir }));
        expect(lastRow.promptTokenIds.length).toBeGreaterThan(1);
        expect(lastRow.generatedTokenIds, dequantize).toEqual(source.generatedTokenIds);
        expect(lastRow.reference, dequantize).toEqual(source.reference);
        expect(lastRow.steps.map((step) => step.reference), dequantize).toEqual(source.steps.map((step) => step.reference));
      }
    } finally {
      copy.remove();
    }
  }, 240_000);
});
