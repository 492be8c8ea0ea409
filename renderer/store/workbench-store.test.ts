import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../app/cache/cache-config.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import type { ModelSummary, RunSummary } from '../../app/protocol/workbench-api.js';
import type { RunCheck } from '../../app/preflight/check-run.js';
import type { RunRecord } from '../../app/record/run-record.js';
import { DEFAULT_RUN_FORM, layerHandlingOf, toRunSettings } from './settings-slice.js';
import { createWorkbenchStore } from './workbench-store.js';
import { MAX_NOTICES } from './notice-slice.js';
import { modelArgument, sameSource } from './model-slice.js';

// The store is framework-free: it must work with React absent (zustand's tests/vanilla pattern).
vi.mock('react', () => ({}));

const summary = (patch: Partial<ModelSummary> = {}): ModelSummary => ({
  source: { kind: 'synthetic' }, displayName: 'synthetic', folder: '/cache/synthetic', onnxFiles: ['onnx/model.onnx'], onnxFile: 'onnx/model.onnx',
  config: null, kvDtype: 'float32', chatTemplate: null, diagnostics: [], ok: true, ...patch,
});

const runSummary = (id: string): RunSummary => ({
  id, createdAt: '2026-01-01T12:00:00.000Z', modelName: 'synthetic', cacheMode: 'quantized', backend: 'quanto', nbits: 4, executionProvider: 'cpu',
  tokens: 8, decodeTokensPerSecond: 100, totalKvBytes: 1000, fp16BaselineBytes: 4000, stopReason: 'max-new-tokens',
});

describe('workbench store', () => {
  let store = createWorkbenchStore('browser');
  afterEach(() => {
    store = createWorkbenchStore('browser');
  });

  it('starts from the initial state of every slice', () => {
    const state = store.getState();
    expect({
      host: state.host, model: state.model.status, form: state.form, run: state.run.status, serial: state.run.serial, view: state.view,
      runs: state.history.runs, notices: state.notices, preflight: state.preflight.status,
    }).toEqual({ host: 'browser', model: 'idle', form: DEFAULT_RUN_FORM, run: 'idle', serial: 0, view: 'live', runs: [], notices: [], preflight: 'idle' });
  });

  describe('model slice', () => {
    it('keeps the previous summary visible while the next model loads, and replaces it when loaded', () => {
      store.getState().modelLoaded(summary(), null);
      store.getState().modelLoading({ kind: 'folder', path: '/models/x' });
      expect(store.getState().model).toMatchObject({ status: 'loading', source: { kind: 'folder', path: '/models/x' }, summary: { displayName: 'synthetic' } });
      store.getState().modelLoaded(summary({ source: { kind: 'folder', path: '/models/x' }, displayName: 'x' }), null);
      expect(store.getState().model).toMatchObject({ status: 'ready', summary: { displayName: 'x' }, error: null });
      expect(store.getState().modelPathDraft).toBe('/models/x');
    });

    it('records an API failure without losing the model that was open', () => {
      store.getState().modelLoaded(summary(), null);
      store.getState().modelFailed({ kind: 'folder', path: '/nope' }, { code: 'invalid-input', message: 'gone', fix: 'pick another' });
      expect(store.getState().model).toMatchObject({ status: 'error', error: { code: 'invalid-input', fix: 'pick another' }, summary: { displayName: 'synthetic' } });
    });

    it('names sources as RunSettings.model expects and compares them by value', () => {
      expect(modelArgument({ kind: 'synthetic-hybrid' })).toBe('synthetic-hybrid');
      expect(modelArgument({ kind: 'folder', path: '/m' })).toBe('/m');
      expect(sameSource({ kind: 'folder', path: '/m' }, { kind: 'folder', path: '/m' })).toBe(true);
      expect(sameSource({ kind: 'folder', path: '/m' }, { kind: 'synthetic' })).toBe(false);
      expect(sameSource(null, null)).toBe(true);
    });
  });

  describe('settings slice', () => {
    it('maps the three hybrid-model choices onto cache mode and layer policy', () => {
      const { chooseLayerHandling } = store.getState();
      chooseLayerHandling('full-attention-only');
      expect([store.getState().form.cacheMode, store.getState().form.quantization.layerPolicy]).toEqual(['quantized', 'full-attention-only']);
      expect(layerHandlingOf(store.getState().form)).toBe('full-attention-only');
      chooseLayerHandling('dynamic');
      expect(layerHandlingOf(store.getState().form)).toBe('dynamic');
      chooseLayerHandling('refuse');
      expect([store.getState().form.cacheMode, store.getState().form.quantization.layerPolicy]).toEqual(['quantized', 'all']);
    });

    it('patches nested settings without touching the rest, and builds RunSettings from the form', () => {
      store.getState().updateQuantization({ nbits: 2, groupSize: 32 });
      store.getState().updateSampling({ greedy: false, seed: 7 });
      const form = store.getState().form;
      expect(form.quantization).toEqual({ ...DEFAULT_RUN_FORM.quantization, nbits: 2, groupSize: 32 });
      expect(toRunSettings(form, 'synthetic', 'onnx/model.onnx')).toEqual({
        model: 'synthetic', onnxFile: 'onnx/model.onnx', executionProvider: 'cpu', cacheMode: 'quantized', quantization: form.quantization,
        prompt: DEFAULT_RUN_FORM.prompt, maxNewTokens: DEFAULT_RUN_FORM.maxNewTokens, sampling: { ...DEFAULT_RUN_FORM.sampling, greedy: false, seed: 7 }, reference: true,
      });
      // where the cache is dequantized: the default (graph) as no choice, so that settings the graph
      // cannot express run host, as the CLI's default; host asked for; a quantized run's setting only
      expect(form.dequantize).toBe('default');
      expect(toRunSettings(form, '/m', null)).not.toHaveProperty('dequantize');
      expect(toRunSettings({ ...form, dequantize: 'graph' }, '/m', null)).toMatchObject({ dequantize: 'graph' });
      expect(toRunSettings({ ...form, dequantize: 'host' }, '/m', null)).toMatchObject({ dequantize: 'host' });
      expect(toRunSettings({ ...form, dequantize: 'host', cacheMode: 'dynamic' }, '/m', null)).not.toHaveProperty('dequantize');
      expect(toRunSettings(form, '/m', null)).not.toHaveProperty('onnxFile');
    });
  });

  describe('preflight slice', () => {
    it('drops a result that belongs to settings edited since', () => {
      const { preflightChecking, preflightDone } = store.getState();
      preflightChecking('a');
      preflightChecking('b');
      const check = (ok: boolean): RunCheck => ({
        ok, promptTokens: 5, maxNewTokens: 8, contextTokens: 13, maxPositions: 512, flushes: 0, failure: null, notes: [], fixes: [],
        preflight: { ok, layerTypes: [], layers: [], diagnostics: [] }, refusal: ok ? null : { message: 'no' },
      });
      preflightDone('a', check(true));
      expect(store.getState().preflight).toMatchObject({ status: 'checking', key: 'b', checkedKey: null });
      preflightDone('b', check(false));
      expect(store.getState().preflight).toMatchObject({ status: 'ready', key: 'b', checkedKey: 'b', check: { ok: false }, result: { ok: false } });
    });
  });

  describe('run slice', () => {
    const settings = toRunSettings(DEFAULT_RUN_FORM, 'synthetic', null);
    const result = { stopReason: 'max-new-tokens' } as GenerationResult;

    it('walks a run through its lifecycle, once per transition', () => {
      const serial = store.getState().runStarting(settings);
      expect(store.getState().run).toMatchObject({ status: 'starting', serial: 1, settings });
      store.getState().runStarted(serial, 'run-1');
      store.getState().runStreaming(serial);
      const afterFirst = store.getState().run;
      store.getState().runStreaming(serial); // later batches change nothing
      expect(store.getState().run).toBe(afterFirst);
      store.getState().runCancelling(serial);
      store.getState().runFinished(serial, result, 'saved-1');
      expect(store.getState().run).toMatchObject({ status: 'done', runId: 'run-1', savedRunId: 'saved-1', result });
    });

    it('ignores late events of a run that is no longer the live one', () => {
      const first = store.getState().runStarting(settings);
      const second = store.getState().runStarting(settings);
      store.getState().runFailed(first, { code: 'worker-crashed', message: 'boom' });
      expect(store.getState().run).toMatchObject({ status: 'starting', serial: second, error: null });
    });
  });

  describe('transformers\' defaults', () => {
    it('puts the cache settings back to transformers\' QuantizedCache defaults and the default dequantize path', () => {
      store.getState().updateQuantization({ nbits: 2, groupSize: 32, residualLength: 16, extensions: { sinkTokens: 4 } });
      store.getState().updateForm({ dequantize: 'host', cacheMode: 'dynamic' });
      store.getState().resetToTransformersDefaults();
      expect(store.getState().form.quantization).toEqual(DEFAULT_QUANTIZED_CACHE_SETTINGS);
      expect(store.getState().form).toMatchObject({ dequantize: 'default', cacheMode: 'quantized' });
      expect(store.getState().quantizationEditedWith).toBeNull();
    });
  });

  describe('history slice', () => {
    it('ticks up to eight runs for comparison in the order ticked, and never unticks one to make room', () => {
      const { toggleCompare } = store.getState();
      for (const id of ['a', 'b', 'c']) toggleCompare(id);
      expect(store.getState().compare.runIds).toEqual(['a', 'b', 'c']);
      toggleCompare('b');
      expect(store.getState().compare.runIds).toEqual(['a', 'c']);
      for (const id of ['d', 'e', 'f', 'g', 'h', 'i', 'j']) toggleCompare(id);
      expect(store.getState().compare.runIds).toEqual(['a', 'c', 'd', 'e', 'f', 'g', 'h', 'i']);
      toggleCompare('k');
      expect(store.getState().compare.runIds).toHaveLength(8);
      expect(store.getState().compare.runIds).not.toContain('k');
    });

    it('forgets a deleted run everywhere it was shown', () => {
      store.getState().historyLoaded([runSummary('a'), runSummary('b')]);
      store.getState().toggleCompare('a');
      store.getState().savedRunLoading('a');
      store.getState().savedRunLoaded({ id: 'a' } as RunRecord);
      store.getState().runDeleted('a');
      const state = store.getState();
      expect({ runs: state.history.runs.map((r) => r.id), ticked: state.compare.runIds, saved: state.savedRun.runId, view: state.view })
        .toEqual({ runs: ['b'], ticked: [], saved: null, view: 'history' });
    });

    it('keeps damaged files apart from the runs (never ticked for comparison) and forgets one once deleted (issue 24)', () => {
      const damaged = { damaged: true as const, id: 'cut', fileName: 'cut.json', bytes: 10, modifiedAt: '2025-01-31T12:00:00.000Z', reason: 'cut.json is not valid JSON.', fix: 'Delete it.', exportable: true };
      store.getState().toggleCompare('cut');
      store.getState().historyLoaded([runSummary('a'), damaged]);
      expect(store.getState().history.runs.map((r) => r.id)).toEqual(['a']);
      expect(store.getState().history.damaged).toEqual([damaged]);
      expect(store.getState().compare.runIds).toEqual([]);
      store.getState().runDeleted('cut');
      expect(store.getState().history.damaged).toEqual([]);
      expect(store.getState().history.runs.map((r) => r.id)).toEqual(['a']);
    });

    it('drops ticks of runs that left the list', () => {
      store.getState().toggleCompare('gone');
      store.getState().historyLoaded([runSummary('a')]);
      expect(store.getState().compare.runIds).toEqual([]);
    });
  });

  describe('notice slice', () => {
    it('keeps the newest notices only', () => {
      for (let i = 0; i < MAX_NOTICES + 2; i++) store.getState().pushNotice({ tone: 'info', title: `n${i}` });
      expect(store.getState().notices.map((n) => n.title)).toEqual(Array.from({ length: MAX_NOTICES }, (_, i) => `n${i + 2}`));
      const id = store.getState().notices[0]!.id;
      store.getState().dismissNotice(id);
      expect(store.getState().notices).toHaveLength(MAX_NOTICES - 1);
    });
  });
});
