import { afterAll, describe, expect, it } from 'vitest';
import type { EvalProgress } from '../../lab/evaluate.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { ensureReference, runEval } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';

const selfStored = tempReferenceStore();
const computed = tempReferenceStore();

afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
  selfStored.remove();
  computed.remove();
});

describe('eval --cache dynamic (the base PPL) in one pass', () => {
  it('feeds each window once, scores it against itself (KLD 0), and stores that pass as the reference the next evaluations read', async () => {
    const phases: EvalProgress['phase'][] = [];
    const dynamic = await runEval(storiesEvalSettings({}, 2), { referenceStore: selfStored.store, perToken: true, onProgress: (progress) => phases.push(progress.phase) });
    // One run per window (the dynamic cache's window is one full-sequence pass), and no reference pass before it.
    expect(phases).toEqual(['eval', 'eval']);
    expect(dynamic.timings.runs).toBe(2);
    expect(dynamic.reference.cached).toBe(false);
    expect(dynamic.summary.kld.max).toBe(0);
    expect(dynamic.summary.top1Agreement).toBe(1);
    expect(dynamic.summary.ppl).toBe(dynamic.summary.pplReference);
    expect(dynamic.summary.deltaPpl).toBe(0);
    expect(dynamic.perToken!.deltaP.every((d) => d === 0)).toBe(true);

    // The stored pass is the reference a separate reference computation gives: the same key, and a
    // quantized evaluation reads it with figures identical to those against the computed one.
    const separate = await ensureReference(storiesEvalSettings({}, 2), { referenceStore: computed.store });
    expect(separate.key).toBe(dynamic.reference.key);
    const quantized = { cacheMode: 'quantized' as const, dequantize: 'host' as const };
    const onSelf = await runEval(storiesEvalSettings(quantized, 2), { referenceStore: selfStored.store });
    const onComputed = await runEval(storiesEvalSettings(quantized, 2), { referenceStore: computed.store });
    expect(onSelf.reference.cached).toBe(true);
    expect(onComputed.reference.cached).toBe(true);
    expect(onSelf.summary).toEqual(onComputed.summary);
    expect(onSelf.summary.pplReference).toBe(dynamic.summary.pplReference);

    // With the reference cached, the dynamic evaluation gives the one-pass figures exactly.
    const again = await runEval(storiesEvalSettings({}, 2), { referenceStore: selfStored.store });
    expect(again.reference.cached).toBe(true);
    expect(again.summary).toEqual(dynamic.summary);
  });
});
