import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import type { SessionFeeds, SessionOutputs } from '../../engine/decoder-session.js';
import { OutputReleasingSession } from '../../engine/output-release.js';
import type { EvalResult } from '../../lab/eval-result.js';
import { hasShared } from '../golden.js';
import { readModelFiles } from '../model/open-model.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { SeededRandom } from '../../synthetic/seeded-random.js';
import { HQQ8, storiesDir } from '../test-support/stories.js';
import { runEval, type RunEvalOptions } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';

/**
 * Eval on a graph without num_logits_to_keep whose LM head is found (stories260k: LogitsRowsSupport
 * `derived`) runs a derived graph that takes the input (issue 23, point 4): each run of a window
 * computes the logits rows eval reads (the prefill's one, a chunk's scored rows, the reference pass's
 * two), not every fed row, and every figure is the one of the folder's graph run as it is.
 */
afterEach(() => vi.restoreAllMocks());
afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
});

interface RunRows {
  /** tokens fed */
  readonly fed: number;
  /** logits rows the graph returned */
  readonly rows: number;
  /** num_logits_to_keep fed, or null where the graph does not take it */
  readonly keep: number | null;
}

/** Runs `evaluate` and returns, for each session run of a window (not the LM head's), the tokens fed and the logits rows returned. */
async function evalRows(evaluate: () => Promise<EvalResult>, names = { inputIds: 'input_ids', logits: 'logits' }): Promise<{ readonly result: EvalResult; readonly runs: RunRows[] }> {
  const runs: RunRows[] = [];
  const original = OutputReleasingSession.prototype.run;
  vi.spyOn(OutputReleasingSession.prototype, 'run').mockImplementation(async function (this: OutputReleasingSession, feeds: SessionFeeds): Promise<SessionOutputs> {
    const outputs = await original.call(this, feeds);
    const keep = feeds['num_logits_to_keep'];
    runs.push({ fed: feeds[names.inputIds]!.dims[1]!, rows: outputs[names.logits]!.dims[1]!, keep: keep === undefined ? null : Number((keep.data as BigInt64Array)[0]) });
    return outputs;
  });
  const result = await evaluate();
  vi.restoreAllMocks();
  return { result, runs };
}

describe.skipIf(!hasShared())('eval on a graph without num_logits_to_keep', () => {
  it('stories260k\'s graph is one a run derives the input for', async () => {
    const files = await readModelFiles(storiesDir());
    expect(files.analysis.io?.logitsToKeep).toBeNull();
    expect(files.analysis.logitsRows).toEqual({ kind: 'derived' });
  });

  it.each([
    ['dynamic (its own reference)', { cacheMode: 'dynamic' }, {}],
    ['hqq 8-bit, host path, compact reference', { cacheMode: 'quantized', quantization: HQQ8, dequantize: 'host' }, {}],
    ['quanto 2-bit, graph path, compact reference', { cacheMode: 'quantized', quantization: { ...HQQ8, backend: 'quanto', nbits: 2, axisKey: 0, axisValue: 0 }, dequantize: 'graph' }, {}],
    ['hqq 8-bit, graph path, float32-logits reference', { cacheMode: 'quantized', quantization: HQQ8, dequantize: 'graph' }, { referenceForm: 'logits' }],
  ] as const)('%s: computes only the rows it reads, every figure the folder\'s graph\'s', async (_name, overrides, more: RunEvalOptions) => {
    const settings = storiesEvalSettings(overrides as Parameters<typeof storiesEvalSettings>[0], 2);
    // Each on a store of its own: the reference too is computed on each side.
    const derivedStore = tempReferenceStore();
    const everyStore = tempReferenceStore();
    try {
      const every = await evalRows(() => runEval(settings, { ...more, referenceStore: everyStore.store, perToken: true, everyLogitsRow: true }));
      const derived = await evalRows(() => runEval(settings, { ...more, referenceStore: derivedStore.store, perToken: true }));
      expect(derived.result.reference.windowsComputed).toBe(2);
      expect(every.result.reference.windowsComputed).toBe(2);
      expect(derived.result.reference.key).toBe(every.result.reference.key);
      expect(derived.result.reference.notes).toBeUndefined();
      expect(derived.result.summary).toEqual(every.result.summary);
      expect(derived.result.perWindow).toEqual(every.result.perWindow);
      expect(derived.result.perToken).toEqual(every.result.perToken);
      expect(derived.result.dequantize).toBe(every.result.dequantize);
      // The record says which graph ran, and that the weights were prepacked (not a sweep job's).
      expect(derived.result.session).toEqual({ logitsRows: 'derived', prepacked: true });
      expect(every.result.session).toEqual({ logitsRows: 'every-row', prepacked: true });

      // The folder's graph: every fed row's logits.
      expect(every.runs.length).toBeGreaterThan(0);
      for (const run of every.runs) expect(run).toEqual({ fed: run.fed, rows: run.fed, keep: null });
      // The derived graph: the rows asked for, no more; the same runs feeding the same tokens.
      expect(derived.runs.map((run) => run.fed)).toEqual(every.runs.map((run) => run.fed));
      for (const run of derived.runs) expect(run.rows).toBe(run.keep);
      const computed = derived.runs.reduce((sum, run) => sum + run.rows, 0);
      const fed = derived.runs.reduce((sum, run) => sum + run.fed, 0);
      expect(computed).toBeLessThan(fed);
      if (settings.cacheMode === 'dynamic') {
        // One run a window, its scored rows and the one after them (positions 256 … 511 of 512).
        expect(derived.runs).toEqual([{ fed: 512, rows: 256, keep: 256 }, { fed: 512, rows: 256, keep: 256 }]);
        // The hidden rows that pass stored (the kept rows' output) give back its logits: the digest check
        // on reading passes (a failed one recomputes the window with a note) and the reference figures are its own.
        const quantized = storiesEvalSettings({ cacheMode: 'quantized', quantization: HQQ8, dequantize: 'host' }, 2);
        const reread = await runEval(quantized, { referenceStore: derivedStore.store, perToken: true });
        expect(reread.reference).toMatchObject({ key: derived.result.reference.key, cached: true, windowsComputed: 0 });
        expect(reread.reference.notes).toBeUndefined();
        expect(reread.perToken!.nllReference).toEqual(derived.result.perToken!.nllReference);
      } else {
        // Each window's prefill computes one row (256 tokens fed), every later run only its own rows.
        expect(derived.runs.filter((run) => run.fed === 256)).toEqual([{ fed: 256, rows: 1, keep: 1 }, { fed: 256, rows: 1, keep: 1 }]);
        // The compact reference's pass: the two last rows of each window's 512 (the float32-logits one reads its 256).
        const referenceRows = more.referenceForm === 'logits' ? 256 : 2;
        expect(derived.runs.filter((run) => run.fed === 512)).toEqual([{ fed: 512, rows: referenceRows, keep: referenceRows }, { fed: 512, rows: referenceRows, keep: referenceRows }]);
      }
    } finally {
      derivedStore.remove();
      everyStore.remove();
    }
  });
});

const ORT_GENAI = join(import.meta.dirname, '../../../../shared/models/ort-genai-tiny');

describe.skipIf(!hasShared())('eval on the onnxruntime-genai exports (no num_logits_to_keep)', () => {
  // lfm2's conv layers: transformers' QuantizedCache refuses them, so its dynamic cache (its own reference).
  it.each([['gpt2-combined-past', 'quantized'], ['lfm2-hybrid-stub', 'dynamic'], ['llama-fp16', 'quantized']] as const)('%s, %s cache: the derived graph computes only the rows eval reads, every figure the folder\'s graph\'s', async (name, cacheMode) => {
    const model = join(ORT_GENAI, name);
    const files = await readModelFiles(model);
    expect(files.analysis.logitsRows).toEqual({ kind: 'derived' });
    const io = files.analysis.io!;
    expect(io.logitsToKeep).toBeNull();
    // ids below the cut vocabularies (1,000 for two of them): the exports' tokenizers encode past them
    const random = new SeededRandom(23);
    const ids = Array.from({ length: 600 }, () => random.nextInt(1000));
    const settings = storiesEvalSettings({
      model, cacheMode, quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 16 },
      text: { name: 'ids.txt', content: ids.join(' '), tokenIds: ids }, windows: { context: 256, stride: 256, prefill: 128, maxWindows: 2 },
    });
    const derivedStore = tempReferenceStore();
    const everyStore = tempReferenceStore();
    try {
      const names = { inputIds: io.inputIds, logits: io.logits };
      const every = await evalRows(() => runEval(settings, { referenceStore: everyStore.store, perToken: true, everyLogitsRow: true }), names);
      const derived = await evalRows(() => runEval(settings, { referenceStore: derivedStore.store, perToken: true }), names);
      expect(derived.result.reference.key).toBe(every.result.reference.key);
      expect(derived.result.summary).toEqual(every.result.summary);
      expect(derived.result.perWindow).toEqual(every.result.perWindow);
      expect(derived.result.perToken).toEqual(every.result.perToken);
      expect(derived.result.flushCounts).toEqual(every.result.flushCounts);
      expect(derived.result.dequantize).toBe(every.result.dequantize);
      for (const run of every.runs) expect(run).toEqual({ fed: run.fed, rows: run.fed, keep: null });
      expect(derived.runs.map((run) => run.fed)).toEqual(every.runs.map((run) => run.fed));
      for (const run of derived.runs) expect(run.rows).toBe(run.keep);
      if (derived.result.feed === 'chunked') {
        // Each window's prefill computes one row of its 128 tokens fed; the dynamic cache's one run its 128 last rows of 256 (positions 128 … 255).
        const [fed, rows] = cacheMode === 'dynamic' ? [256, 128] : [128, 1];
        expect(derived.runs.filter((run) => run.fed === fed)).toEqual([{ fed, rows, keep: rows }, { fed, rows, keep: rows }]);
        expect(derived.runs.reduce((sum, run) => sum + run.rows, 0)).toBeLessThan(derived.runs.reduce((sum, run) => sum + run.fed, 0));
      }
    } finally {
      derivedStore.remove();
      everyStore.remove();
    }
  });
});
