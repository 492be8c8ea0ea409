import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { decodeModel, encodeModel } from '../../onnx/onnx-model.js';
import { keepLogitsRows } from '../../onnx/rewrite/logits-rows.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { HQQ8, storiesDir } from '../test-support/stories.js';
import type { EvalResult } from '../../lab/eval-result.js';
import { setSweepJobs } from '../ort/ort-decoder-session.js';
import { runEval } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';

/**
 * The evaluated chunks' scored logits through the LM head input (evaluate.ts ChunkHead, issue 23):
 * on the graph path a chunk's run returns its hidden states and its last two logits rows, and the
 * head computes the rest a few rows at a time. stories260k with the logits-rows rewrite applied (a
 * head that reads kept rows, as the scale models' does) stands in: every figure and every prediction
 * must equal the evaluation whose chunks compute all their logits in their own runs.
 */
const folder = mkdtempSync(join(tmpdir(), 'kvscope-chunk-head-'));
for (const name of readdirSync(storiesDir())) {
  if (statSync(join(storiesDir(), name)).isFile()) copyFileSync(join(storiesDir(), name), join(folder, name));
}
mkdirSync(join(folder, 'onnx'));
writeFileSync(join(folder, 'onnx', 'model.onnx'), encodeModel(keepLogitsRows(decodeModel(readFileSync(join(storiesDir(), 'onnx', 'model.onnx'))))));
const references = tempReferenceStore();

afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
  references.remove();
  rmSync(folder, { recursive: true, force: true });
});

describe('an evaluation\'s chunk logits through the LM head input', () => {
  // A sweep's sessions do not prepack their weights (ort-decoder-session.ts SessionSharing), where MLAS
  // computes a one-row product another way: the chunk's two checked rows still match the head's.
  it.each([
    ['quanto 2-bit g32 R32', { ...HQQ8, backend: 'quanto', nbits: 2, axisKey: 0, axisValue: 0 }, undefined],
    ['hqq 4-bit, the default residual', { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, nbits: 4 }, undefined],
    ['quanto 2-bit g32 R32, a sweep\'s unprepacked session', { ...HQQ8, backend: 'quanto', nbits: 2, axisKey: 0, axisValue: 0 }, 2],
  ] as const)('%s, graph path: every figure and every prediction equal the whole-chunk logits\', no window scored again', async (_name, quantization, jobs) => {
    const settings = storiesEvalSettings({ model: folder, cacheMode: 'quantized', quantization, dequantize: 'graph' } as Parameters<typeof storiesEvalSettings>[0], 2);
    setSweepJobs(jobs);
    try {
      const viaHead = await runEval(settings, { referenceStore: references.store, perToken: true });
      const wholeChunk = await runEval(settings, { referenceStore: references.store, perToken: true, chunkLogits: true });
      expectSameFigures(viaHead, wholeChunk);
    } finally {
      setSweepJobs(undefined);
    }
  });
});

function expectSameFigures(viaHead: EvalResult, wholeChunk: EvalResult): void {
  expect(viaHead.dequantize).toBe('graph');
  // a window the head's rows failed would say so here (evaluate.ts HeadMismatch)
  expect(viaHead.reference.notes).toBeUndefined();
  expect(viaHead.summary).toEqual(wholeChunk.summary);
  expect(viaHead.perWindow).toEqual(wholeChunk.perWindow);
  expect(viaHead.perToken).toEqual(wholeChunk.perToken);
  expect(viaHead.timings.runs).toBe(wholeChunk.timings.runs);
}
