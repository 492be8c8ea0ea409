import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeModel, encodeModel } from '../../onnx/onnx-model.js';
import { keepLogitsRows } from '../../onnx/rewrite/logits-rows.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { HQQ8, storiesDir } from '../test-support/stories.js';
import { ensureReferenceGraphs } from './reference-graphs.js';
import { sha256Floats } from './reference-window-file.js';
import { runEval } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';

/**
 * The compact reference on a graph whose head reads the last num_logits_to_keep rows (the scale
 * models, Optimum exports): the reference pass returns every row's hidden state and two rows of
 * logits, the LM head computes the scored rows' logits a few at a time, and the evaluation reads them
 * row by row as it scores (issue 23: a window's vocabulary-wide logits never held whole). stories260k
 * with the logits-rows rewrite applied stands in for them: the figures, every prediction and each
 * window's logits digest must equal the float32-logits reference's, computed the full way.
 */
const folder = mkdtempSync(join(tmpdir(), 'kvscope-kept-rows-'));
for (const name of readdirSync(storiesDir())) {
  if (statSync(join(storiesDir(), name)).isFile()) copyFileSync(join(storiesDir(), name), join(folder, name));
}
mkdirSync(join(folder, 'onnx'));
writeFileSync(join(folder, 'onnx', 'model.onnx'), encodeModel(keepLogitsRows(decodeModel(readFileSync(join(storiesDir(), 'onnx', 'model.onnx'))))));

const compactStore = tempReferenceStore();
const logitsStore = tempReferenceStore();

afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
  compactStore.remove();
  logitsStore.remove();
  rmSync(folder, { recursive: true, force: true });
});

describe('the compact reference on a graph that keeps logits rows', () => {
  it('its reference graph returns the whole sequence\'s hidden state; a graph without num_logits_to_keep has none to return', async () => {
    const kept = await ensureReferenceGraphs(join(folder, 'onnx', 'model.onnx'), 'logits');
    const plain = await ensureReferenceGraphs(join(storiesDir(), 'onnx', 'model.onnx'), 'logits');
    if ('reason' in kept || 'reason' in plain) throw new Error('expected the heads of both graphs to be cut');
    expect(kept.sequenceHidden).toEqual(expect.any(String));
    expect(kept.sequenceHidden).not.toBe(kept.hidden);
    expect(plain.sequenceHidden).toBeNull();
  });

  it.each([
    ['quanto 2-bit g32 R32, graph path', { cacheMode: 'quantized', quantization: { ...HQQ8, backend: 'quanto', nbits: 2, axisKey: 0, axisValue: 0 }, dequantize: 'graph' }],
    ['hqq 8-bit, host path', { cacheMode: 'quantized', quantization: HQQ8, dequantize: 'host' }],
  ] as const)('%s: every figure, every prediction and each window\'s logits digest equal the float32-logits reference\'s', async (_name, overrides) => {
    const settings = storiesEvalSettings({ model: folder, ...overrides } as Parameters<typeof storiesEvalSettings>[0], 2);
    const compact = await runEval(settings, { referenceStore: compactStore.store, perToken: true });
    const float32 = await runEval(settings, { referenceStore: logitsStore.store, perToken: true, referenceForm: 'logits' });
    expect(compact.reference.key).toBe(float32.reference.key);
    expect(compact.reference.notes).toBeUndefined();
    expect(compact.summary).toEqual(float32.summary);
    expect(compact.perWindow).toEqual(float32.perWindow);
    expect(compact.perToken).toEqual(float32.perToken);
    // The head's logits, stored as a digest, are the full pass's float32 logits bit for bit.
    const meta = {
      model: { folder: 'x', onnxFile: 'y' }, text: { name: 't', sha256: 's' }, windows: { context: 512, stride: 512, prefill: 256 }, feed: 'chunked', executionProvider: 'cpu',
    } as const;
    for (const index of [0, 1]) {
      const hidden = compactStore.store.entry(compact.reference.key, meta).read(index, 255);
      const logits = logitsStore.store.entry(float32.reference.key, meta).read(index, 255);
      if (!hidden.ok || hidden.stored.kind !== 'hidden' || !logits.ok || logits.stored.kind !== 'logits') throw new Error('expected a compact and a float32 window');
      expect(hidden.stored.logitsSha256).toBe(sha256Floats(logits.stored.window.logits));
    }
  });
});
