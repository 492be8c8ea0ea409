import { closeSync, openSync, readdirSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { HQQ8 } from '../test-support/stories.js';
import { runEval } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';
import { writeWindowFile } from './reference-window-file.js';

const references = tempReferenceStore();

afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
  references.remove();
});

const windowFiles = (): string[] => readdirSync(references.dir).flatMap((key) => readdirSync(join(references.dir, key)).filter((name) => name.endsWith('.bin')));

describe('the eval reference cache on stories260k', () => {
  it('writes each window before computing the next, and one reference serves any window count of the same text', async () => {
    const onDisk: number[] = [];
    const two = await runEval(storiesEvalSettings({ cacheMode: 'quantized', quantization: HQQ8 }, 2), {
      referenceStore: references.store,
      onProgress: (progress) => {
        if (progress.phase === 'reference') onDisk.push(windowFiles().length);
      },
    });
    // After window n is computed, n windows are on disk: nothing waits in memory for the others.
    expect(onDisk).toEqual([1, 2]);
    expect(two.reference).toMatchObject({ cached: false, windowsComputed: 2 });
    // Compact: each window holds its 255 scored rows' hidden states (64 float32), not their 512 logits.
    expect(two.reference.bytes).toBeGreaterThan(2 * 255 * 64 * 4);
    expect(two.reference.bytes).toBeLessThan(2 * 255 * 64 * 4 + 4096);
    // Three windows of the same text: the two stored ones are read, the third is computed and added.
    const three = await runEval(storiesEvalSettings({ cacheMode: 'quantized', quantization: HQQ8 }, 3), { referenceStore: references.store });
    expect(three.reference).toMatchObject({ key: two.reference.key, cached: false, windowsComputed: 1 });
    expect(windowFiles()).toHaveLength(3);
    // One window: wholly from the cache, and the figures of the first window are the same ones.
    const one = await runEval(storiesEvalSettings({ cacheMode: 'quantized', quantization: HQQ8 }, 1), { referenceStore: references.store });
    expect(one.reference).toMatchObject({ key: two.reference.key, cached: true, windowsComputed: 0 });
    expect(one.perWindow[0]!.summary).toEqual(three.perWindow[0]!.summary);
    expect(three.perWindow.slice(0, 2)).toEqual(two.perWindow);
  });

  it('a window whose floats were changed (size kept) is discarded, computed again and noted; PPL(base) stays right', async () => {
    const settings = storiesEvalSettings({}, 2);
    const clean = await runEval(settings, { referenceStore: references.store });
    const path = join(references.dir, clean.reference.key, 'w1.bin');
    const size = statSync(path).size;
    // Other hidden states for the last rows of the window (other logits, other NLLs).
    const fd = openSync(path, 'r+');
    try {
      const bytes = new Uint8Array(new Float32Array(1024).fill(3).buffer);
      writeSync(fd, bytes, 0, bytes.length, size - bytes.length);
    } finally {
      closeSync(fd);
    }
    expect(statSync(path).size).toBe(size);
    const mended = await runEval(settings, { referenceStore: references.store });
    expect(mended.reference.notes).toEqual(['reference window 2 failed its check (its content does not match its sha256 (the file was changed or damaged)): discarded and computed again.']);
    expect(mended.summary.pplReference).toBe(clean.summary.pplReference);
    expect(mended.summary).toEqual(clean.summary);
    // The window was written again: the next evaluation reads it without a note.
    const after = await runEval(settings, { referenceStore: references.store });
    expect(after.reference.notes).toBeUndefined();
    expect(after.reference.cached).toBe(true);
  });
});

describe('the compact reference is exact', () => {
  const logitsStore = tempReferenceStore();
  const compactStore = tempReferenceStore();
  afterAll(() => {
    logitsStore.remove();
    compactStore.remove();
  });

  it.each([
    ['dynamic', {}],
    ['quanto 2-bit g32 R32, graph path', { cacheMode: 'quantized', quantization: { ...HQQ8, backend: 'quanto', nbits: 2, axisKey: 0, axisValue: 0 }, dequantize: 'graph' }],
    ['hqq 8-bit, host path', { cacheMode: 'quantized', quantization: HQQ8, dequantize: 'host' }],
  ] as const)('%s: every figure and every prediction equals the float32-logits reference\'s, bit for bit', async (_name, overrides) => {
    const settings = storiesEvalSettings(overrides as Partial<Parameters<typeof storiesEvalSettings>[0]>, 2);
    const compact = await runEval(settings, { referenceStore: compactStore.store, perToken: true });
    const float32 = await runEval(settings, { referenceStore: logitsStore.store, perToken: true, referenceForm: 'logits' });
    expect(compact.reference.key).toBe(float32.reference.key);
    // 64 hidden floats per scored token against 512 logits: an eighth of the bytes.
    expect(compact.reference.bytes! * 7).toBeLessThan(float32.reference.bytes!);
    // No window was discarded: the head, run on whichever session held the weights (the rewritten graph's on the graph path), gave the stored logits' digest.
    expect(compact.reference.notes).toBeUndefined();
    expect(compact.summary).toEqual(float32.summary);
    expect(compact.perWindow).toEqual(float32.perWindow);
    expect(compact.perToken).toEqual(float32.perToken);
  });

  it('hidden states that do not give the logits they were stored with are caught (the digest), discarded and computed again', async () => {
    const settings = storiesEvalSettings({}, 1);
    const clean = await runEval(settings, { referenceStore: references.store });
    const entry = references.store.entry(clean.reference.key, {
      model: { folder: 'x', onnxFile: 'y' }, text: { name: 't', sha256: 's' }, windows: { context: 512, stride: 512, prefill: 256 }, feed: 'chunked', executionProvider: 'cpu',
    });
    const read = entry.read(0, 255);
    if (!read.ok || read.stored.kind !== 'hidden') throw new Error('expected a compact window');
    // A well-formed file (its payload's own sha256 right) whose logits digest is another's.
    writeWindowFile(entry.windowPath(0), clean.reference.key, 0, { ...read.stored, logitsSha256: '0'.repeat(64) });
    const mended = await runEval(settings, { referenceStore: references.store });
    expect(mended.reference.notes).toEqual(['reference window 1 failed its check (its hidden states do not give the logits they were stored with): discarded and computed again.']);
    expect(mended.summary).toEqual(clean.summary);
  });
});
