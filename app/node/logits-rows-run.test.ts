import { create } from '@bufbuild/protobuf';
import { NodeProtoSchema } from 'onnx-buf';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import type { SessionOutputs } from '../engine/decoder-session.js';
import { LogitsReader } from '../engine/logits-row.js';
import { decodeModel, encodeModel } from '../onnx/onnx-model.js';
import { keepLogitsRows } from '../onnx/rewrite/logits-rows.js';
import { hasShared } from './golden.js';
import { readModelFiles } from './model/open-model.js';
import { releaseCachedSessions } from './ort/session-cache.js';
import { prefillModelFacts, runGeneration, warmModel } from './run-generation.js';
import { copyOfStories, storiesDir, storiesSettings } from './test-support/stories.js';

afterAll(() => releaseCachedSessions());
afterEach(() => vi.restoreAllMocks());

const QUANTIZATION = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 16 };
const PROMPT = 'Once upon a time there was';

/** Runs `run` and returns the rows of `logits` each session run returned (dims[1]), in step order. */
async function logitsRowsOf<T>(run: () => Promise<T>): Promise<{ readonly result: T; readonly rows: number[] }> {
  const spy = vi.spyOn(LogitsReader.prototype, 'readRows');
  try {
    const result = await run();
    const rows = spy.mock.calls.map(([outputs]) => (outputs as SessionOutputs)['logits']!.dims[1]!);
    return { result, rows };
  } finally {
    spy.mockRestore();
  }
}

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
      for (const dequantize of ['graph', 'host'] as const) {
        const settings = { cacheMode: 'quantized' as const, quantization: QUANTIZATION, dequantize, prompt: PROMPT, maxNewTokens: 40, reference: true };
        // the shared folder's graph as it is: every prompt row's logits
        const source = await runGeneration(storiesSettings(settings), {}, { everyLogitsRow: true });
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

describe.skipIf(!hasShared())('kvscope run on a user model without num_logits_to_keep (stories260k): a derived graph', () => {
  it('computes one logits row at the prefill and at every step, with the source graph\'s ids and reference bit for bit, on every path', async () => {
    const cases = [
      { cacheMode: 'dynamic' as const },
      { cacheMode: 'quantized' as const, quantization: QUANTIZATION, dequantize: 'graph' as const },
      { cacheMode: 'quantized' as const, quantization: QUANTIZATION, dequantize: 'host' as const },
    ];
    for (const path of cases) {
      const settings = storiesSettings({ ...path, prompt: PROMPT, maxNewTokens: 24, reference: true });
      const derived = await logitsRowsOf(() => runGeneration(settings));
      const every = await logitsRowsOf(() => runGeneration(settings, {}, { everyLogitsRow: true }));
      const label = JSON.stringify(path);
      const promptTokens = derived.result.promptTokenIds.length;
      expect(promptTokens, label).toBeGreaterThan(1);
      // every session run (each step's, the reference replay's) returned one row; the prefill's too, not the prompt's
      expect(derived.rows.length, label).toBeGreaterThanOrEqual(derived.result.steps.length);
      expect(new Set(derived.rows), label).toEqual(new Set([1]));
      expect(every.rows[0], label).toBe(promptTokens);
      expect(derived.result.generatedTokenIds, label).toEqual(every.result.generatedTokenIds);
      expect(derived.result.reference, label).toEqual(every.result.reference);
      expect(derived.result.steps.map((step) => step.reference), label).toEqual(every.result.steps.map((step) => step.reference));
      expect(derived.result.diagnostics.filter((d) => d.code === 'logits-rows'), label).toEqual([]);
      expect(derived.result.session, label).toEqual({ logitsRows: 'derived', prepacked: true });
      expect(every.result.session, label).toEqual({ logitsRows: 'every-row', prepacked: true });
    }
  }, 240_000);

  it('a warmed model\'s next run leases the derived graph\'s session warmed for it', async () => {
    await releaseCachedSessions();
    await warmModel({ model: storiesDir(), executionProvider: 'cpu' });
    const run = await runGeneration(storiesSettings({ prompt: PROMPT, maxNewTokens: 2 }));
    expect(run.timings.sessionReused).toBe(true);
  }, 120_000);

  it('the prefill guard counts one logits row for it, and every row when the run keeps the source graph', async () => {
    const files = await readModelFiles(storiesDir());
    expect(files.analysis.io!.logitsToKeep).toBeNull();
    expect(files.analysis.logitsRows).toEqual({ kind: 'derived' });
    expect(prefillModelFacts(files, true)).toMatchObject({ vocabSize: 512, logitsLastRowOnly: true });
    expect(prefillModelFacts(files, false)).toMatchObject({ vocabSize: 512, logitsLastRowOnly: false });
  });

  it('where the LM head is not found, runs the source graph (every row) and says so in one line', async () => {
    const copy = copyOfStories();
    try {
      // logits through a Dropout (identity at inference): not a row-wise op the head search follows
      const path = join(copy.dir, 'onnx', 'model.onnx');
      const model = decodeModel(readFileSync(path));
      const head = model.graph!.node.find((node) => node.output.includes('logits'))!;
      head.output = head.output.map((name) => (name === 'logits' ? 'logits_before_dropout' : name));
      model.graph!.node.push(create(NodeProtoSchema, { name: 'dropout_after_head', opType: 'Dropout', input: ['logits_before_dropout'], output: ['logits'] }));
      writeFileSync(path, encodeModel(model));
      const files = await readModelFiles(copy.dir);
      expect(files.analysis.logitsRows).toMatchObject({ kind: 'every-row' });
      expect(prefillModelFacts(files, files.analysis.logitsRows.kind === 'derived')).toMatchObject({ logitsLastRowOnly: false });

      const settings = storiesSettings({ prompt: PROMPT, maxNewTokens: 24 });
      const fallback = await logitsRowsOf(() => runGeneration({ ...settings, model: copy.dir }));
      const source = await runGeneration(settings, {}, { everyLogitsRow: true });
      expect(fallback.rows[0]).toBe(fallback.result.promptTokenIds.length);
      expect(fallback.result.generatedTokenIds).toEqual(source.generatedTokenIds);
      expect(fallback.result.session).toEqual({ logitsRows: 'every-row', prepacked: true });
      const notes = fallback.result.diagnostics.filter((d) => d.code === 'logits-rows');
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatchObject({ severity: 'info' });
      expect(notes[0]!.message).toContain('the LM head before `logits` was not found (the Dropout node writing logits is not a row-wise op)');
    } finally {
      copy.remove();
    }
  }, 240_000);
});
