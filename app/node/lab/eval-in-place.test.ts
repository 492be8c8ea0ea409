import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasShared } from '../golden.js';
import { readModelFiles } from '../model/open-model.js';
import { setSweepJobs } from '../ort/ort-decoder-session.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { HQQ8, storiesDir } from '../test-support/stories.js';
import { runEval, type RunEvalOptions } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';

/*
 * Eval where neither the compact reference's graph nor the logits-rows cut applies runs the folder's
 * graph; where that graph keeps its weights inside its .onnx (stories260k does), it runs the same
 * graph with them read in place (ensureInPlaceModel: memory-mapped, so a sweep's jobs share one copy)
 * instead of each session parsing a copy. Every figure is the folder's graph's, bit for bit, with the
 * weights prepacked (run, eval) and read in place (a sweep's jobs).
 */

const previousCache = process.env['KVSCOPE_CACHE_DIR'];
let cacheRoot: string;
beforeAll(() => {
  cacheRoot = mkdtempSync(join(tmpdir(), 'kvscope-eval-in-place-'));
  process.env['KVSCOPE_CACHE_DIR'] = cacheRoot;
});
afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
  if (previousCache === undefined) delete process.env['KVSCOPE_CACHE_DIR'];
  else process.env['KVSCOPE_CACHE_DIR'] = previousCache;
  rmSync(cacheRoot, { recursive: true, force: true });
});

/** The derived graphs in the cache that are the source graph itself, its weights read in place. */
function inPlaceEntries(): string[] {
  const dir = join(cacheRoot, 'derived-graphs');
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => !name.startsWith('.'));
  } catch {
    return [];
  }
  return names.filter((name) => (JSON.parse(readFileSync(join(dir, name, 'derived-graph.json'), 'utf8')) as { kind: string }).kind === 'in-place');
}

// float32 logits kept (no compact reference graph) and every row computed (no logits-rows cut): the folder's graph is what runs
const PLAIN: RunEvalOptions = { referenceForm: 'logits', everyLogitsRow: true, perToken: true };

describe.skipIf(!hasShared())('eval on a graph whose weights are inside its .onnx (issue 23)', () => {
  it('stories260k keeps its weights inside its .onnx', async () => {
    const files = await readModelFiles(storiesDir());
    expect(files.analysis.embeddedWeightsBytes).toBeGreaterThan(0.8 * files.analysis.externalData.totalBytes);
    expect(files.analysis.externalData.files).toEqual([]);
  });

  it.each([
    ['dynamic, prepacked (eval)', { cacheMode: 'dynamic' }, undefined],
    ['hqq 8-bit host path, prepacked (eval)', { cacheMode: 'quantized', quantization: HQQ8, dequantize: 'host' }, undefined],
    ['hqq 8-bit host path, a sweep\'s job (weights unpacked)', { cacheMode: 'quantized', quantization: HQQ8, dequantize: 'host' }, 1],
  ] as const)('%s: runs the in-place graph, every figure the folder\'s graph\'s bit for bit', async (_name, overrides, sweepJobs) => {
    const settings = storiesEvalSettings(overrides as Parameters<typeof storiesEvalSettings>[0], 2);
    const copiedStore = tempReferenceStore();
    const inPlaceStore = tempReferenceStore();
    setSweepJobs(sweepJobs);
    try {
      rmSync(join(cacheRoot, 'derived-graphs'), { recursive: true, force: true });
      const copied = await runEval(settings, { ...PLAIN, weightsCopied: true, referenceStore: copiedStore.store });
      expect(inPlaceEntries()).toEqual([]);
      const inPlace = await runEval(settings, { ...PLAIN, referenceStore: inPlaceStore.store });
      expect(inPlaceEntries()).toHaveLength(1);
      expect(inPlace.reference.windowsComputed).toBe(2);
      expect(inPlace.reference.key).toBe(copied.reference.key);
      expect(inPlace.summary).toEqual(copied.summary);
      expect(inPlace.perWindow).toEqual(copied.perWindow);
      expect(inPlace.perToken).toEqual(copied.perToken);
      expect(inPlace.session).toEqual(copied.session);
      expect(inPlace.session?.prepacked).toBe(sweepJobs === undefined);
    } finally {
      setSweepJobs(undefined);
      copiedStore.remove();
      inPlaceStore.remove();
    }
  }, 120_000);
});
