import { describe, expect, it, vi } from 'vitest';
import { parseRunRecord } from '../../app/record/parse-run-record.js';
import { exportableRunId, notSavedNotice } from '../store/run-slice.js';
import { createWorkbenchStore } from '../store/workbench-store.js';
import { createFakeWorkbenchApi } from '../test-support/fake-workbench-api.js';
import { ManualScheduler } from '../test-support/manual-scheduler.js';
import { WorkbenchController } from './workbench-controller.js';

async function started(options: { host?: 'browser' | 'electron'; pickedFolder?: string; unwritableDataFolder?: boolean } = {}) {
  const scheduler = new ManualScheduler();
  const api = createFakeWorkbenchApi({ scheduler, stepsPerBatch: 8, ...options });
  api.recentModels = vi.fn(api.recentModels.bind(api));
  const store = createWorkbenchStore(api.host);
  const download = vi.fn();
  const controller = new WorkbenchController(api, store, { preflightDelayMs: 0, download, timers: scheduler });
  const start = controller.start();
  await scheduler.runAll();
  await start;
  return { scheduler, api, store, controller, download };
}

/** How many times the controller asked the host for the recent models. */
function recentCalls(api: { recentModels: unknown }): number {
  return (api.recentModels as ReturnType<typeof vi.fn>).mock.calls.length;
}

describe('WorkbenchController', () => {
  it('opens the environment\'s default model on start, with the inline preflight', async () => {
    const { store, scheduler, api } = await started();
    await scheduler.runAll();
    expect(recentCalls(api)).toBe(1); // once, after the default model opened
    const state = store.getState();
    expect(state.environment?.defaultModel).toEqual({ kind: 'synthetic' });
    expect(state.model).toMatchObject({ status: 'ready', summary: { displayName: 'synthetic', ok: true }, layerVerdict: null });
    expect(state.recentModels).toEqual([{ kind: 'synthetic' }]);
    expect(state.preflight).toMatchObject({ status: 'ready', result: { ok: true } });
  });

  it('settles the run check when a change of backend is followed by an update that leaves the settings as they are', async () => {
    const { store, scheduler } = await started();
    await scheduler.runAll();
    store.getState().updateQuantization({ backend: 'hqq' });
    expect(store.getState().preflight.status).toBe('checking');
    // the same settings again before the debounce fires (a select's change and input events, a re-render)
    store.getState().updateQuantization({ backend: 'hqq' });
    await scheduler.runAll();
    const preflight = store.getState().preflight;
    expect(preflight.status).toBe('ready');
    expect(preflight.checkedKey).toBe(preflight.key);
    expect(JSON.parse(preflight.key!).quantization.backend).toBe('hqq');
  });

  it('streams a run into buffers outside the store and saves it', async () => {
    const { store, controller, scheduler, api } = await started();
    store.getState().updateForm({ maxNewTokens: 40 });
    store.getState().updateQuantization({ residualLength: 8 });
    const seen: string[] = [];
    const unsubscribe = store.subscribe((state, previous) => {
      if (state.run !== previous.run) seen.push(state.run.status);
    });
    const run = controller.startRun();
    await scheduler.runAll();
    await run;
    unsubscribe();
    const state = store.getState();
    const buffers = controller.liveBuffers(state.run.serial)!;
    // 40 steps arrived in 5 batches; the store saw only the lifecycle
    expect(seen).toEqual(['starting', 'starting', 'running', 'done']); // starting, ticket, first batch, done
    expect(buffers.metrics.stepCount).toBe(40);
    expect(buffers.text.tokenCount).toBe(40);
    expect(buffers.metrics.flushesPerLayer()).toBe(state.run.result!.flushCounts[0]);
    expect(state.run.savedRunId).toBe(api.savedRecords[0]!.id);
    expect(state.history.runs.map((r) => r.id)).toEqual([state.run.savedRunId]);
  });

  it('shows the refusal of a hybrid model, then runs it with full-attention layers only', async () => {
    const { store, controller, scheduler } = await started();
    const opening = controller.openModel({ kind: 'synthetic-hybrid' });
    await scheduler.runAll();
    await opening;
    expect(store.getState().model.layerVerdict).toMatchObject({ code: 'unsupported-layer-types', layers: [0, 2, 4, 6] });
    store.getState().updateForm({ maxNewTokens: 16 });
    const refused = controller.startRun();
    await scheduler.runAll();
    await refused;
    // refused before it starts: no run, a notice with transformers' message and the fix
    expect(store.getState().run.status).toBe('idle');
    expect(store.getState().notices.at(-1)).toMatchObject({ tone: 'error', title: 'This run is refused', error: { code: 'refused', fix: expect.stringContaining('full-attention-only') } });
    expect(store.getState().notices.at(-1)!.error!.message).toContain('`QuantizedCache` is only supported for models with only full attention layers.');

    store.getState().chooseLayerHandling('full-attention-only');
    const accepted = controller.startRun();
    await scheduler.runAll();
    await accepted;
    expect(store.getState().run).toMatchObject({ status: 'done', result: { stopReason: 'max-new-tokens' } });
    expect(store.getState().run.result!.flushCounts).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('cancels mid-run: the run ends as cancelled and is saved', async () => {
    const { store, controller, scheduler } = await started();
    store.getState().updateForm({ maxNewTokens: 1000 });
    const run = controller.startRun();
    await scheduler.runAll(5);
    await run;
    expect(store.getState().run.status).toBe('running');
    await controller.cancelRun();
    expect(store.getState().run.status).toBe('cancelling');
    await scheduler.runAll();
    const result = store.getState().run.result!;
    expect(result.stopReason).toBe('cancelled');
    expect(result.steps.length).toBeLessThan(1000);
    expect(store.getState().history.runs[0]!.stopReason).toBe('cancelled');
  });

  it('reports a crashed worker with its code and fix, and keeps working', async () => {
    const { store, controller, scheduler } = await started();
    store.getState().updateForm({ prompt: 'Once upon a time #crash', maxNewTokens: 50 });
    const crashed = controller.startRun();
    await scheduler.runAll();
    await crashed;
    expect(store.getState().run).toMatchObject({ status: 'error', error: { code: 'worker-crashed', fix: expect.any(String) } });
    store.getState().updateForm({ prompt: 'Once upon a time', maxNewTokens: 10 });
    const next = controller.startRun();
    await scheduler.runAll();
    await next;
    expect(store.getState().run.status).toBe('done');
  });

  it('explains a folder that does not exist', async () => {
    const { store, controller, scheduler } = await started();
    const opening = controller.openFolderPath('/no/such/folder');
    await scheduler.runAll();
    await opening;
    expect(store.getState().model).toMatchObject({ status: 'ready', summary: { ok: false, diagnostics: [{ code: 'model-folder-missing', fix: expect.any(String) }] } });
    expect(store.getState().recentModels).toEqual([{ kind: 'synthetic' }]);
    await controller.startRun();
    expect(store.getState().notices.at(-1)).toMatchObject({ tone: 'error', title: 'This model cannot run', error: { code: 'model-folder-missing' } });
  });

  it('follows menu commands: a dropped folder opens, export downloads the run in the browser', async () => {
    const { store, controller, scheduler, api, download } = await started();
    api.emitCommand({ type: 'model-dropped', path: '/fake/models/stories260k' });
    await scheduler.runAll();
    expect(store.getState().model.summary).toMatchObject({ displayName: 'stories260k', onnxFiles: ['onnx/model.onnx', 'onnx/model_fp16.onnx'] });
    store.getState().updateForm({ maxNewTokens: 20 });
    store.getState().updateQuantization({ groupSize: 32, residualLength: 4 });
    api.emitCommand({ type: 'run' });
    await scheduler.runAll();
    expect(store.getState().run.status).toBe('done');
    api.emitCommand({ type: 'export', format: 'json' });
    await scheduler.runAll();
    expect(download).toHaveBeenCalledTimes(1);
    const [fileName, mimeType, content] = download.mock.calls[0]! as [string, string, string];
    expect([fileName, mimeType]).toEqual([`kvscope-run-${store.getState().run.savedRunId}.json`, 'application/json']);
    const record = parseRunRecord(content, fileName);
    const live = controller.liveBuffers(store.getState().run.serial)!;
    expect(record.flushCounts).toEqual([...live.metrics.flushCounts]);
    void controller;
  });

  it('exports a run the host could not save (an unwritable data folder) by its live run id, from the menu too', async () => {
    const { store, controller, scheduler, api, download } = await started({ unwritableDataFolder: true });
    store.getState().updateForm({ maxNewTokens: 12 });
    const run = controller.startRun();
    await scheduler.runAll();
    await run;
    const state = store.getState().run;
    expect(state.status).toBe('done');
    expect(state.savedRunId).toBeNull();
    expect(api.savedRecords).toHaveLength(0);
    expect(notSavedNotice(state.result)).toMatchObject({ code: 'run-not-saved', severity: 'info', message: expect.stringContaining(`can still be exported (run ${state.runId})`) });
    expect(exportableRunId(state)).toBe(state.runId);

    api.emitCommand({ type: 'export', format: 'csv' });
    await scheduler.runAll();
    expect(download).toHaveBeenCalledTimes(1);
    const [fileName, , content] = download.mock.calls[0]! as [string, string, string];
    expect(fileName).toBe(`kvscope-run-${state.runId}.csv`);
    expect((content as string).trim().split('\r\n')).toHaveLength(1 + 12);
    await controller.exportRun(state.runId!, 'json');
    const record = parseRunRecord(download.mock.calls[1]![2] as string, 'run.json');
    expect(record.generatedTokenIds).toEqual(state.result!.generatedTokenIds);
    expect(store.getState().notices.some((notice) => notice.tone === 'error')).toBe(false);
  });

  it('has nothing to export while a run goes, or for a failed one', () => {
    const base = { runId: 'r1', result: null, savedRunId: null };
    expect(exportableRunId({ ...base, status: 'running' })).toBeNull();
    expect(exportableRunId({ ...base, status: 'error' })).toBeNull();
    expect(exportableRunId({ ...base, status: 'done', savedRunId: 's1' })).toBe('s1');
  });

  it('opens Electron\'s native picker on the open command', async () => {
    const { store, api, scheduler } = await started({ host: 'electron', pickedFolder: '/fake/models/gemma-3-1b-it' });
    api.emitCommand({ type: 'open-model' });
    await scheduler.runAll();
    expect(store.getState().model.summary?.displayName).toBe('gemma-3-1b-it');
    expect(store.getState().model.layerVerdict?.code).toBe('unsupported-layer-types');
  });

  it('opens, compares and deletes saved runs', async () => {
    const { store, controller, scheduler } = await started();
    store.getState().updateForm({ maxNewTokens: 12 });
    for (const nbits of [4, 2]) {
      store.getState().updateQuantization({ nbits });
      const run = controller.startRun();
      await scheduler.runAll();
      await run;
    }
    const [newest, oldest] = store.getState().history.runs.map((r) => r.id) as [string, string];
    await controller.openSavedRun(newest);
    expect(store.getState()).toMatchObject({ view: 'saved', savedRun: { status: 'ready', runId: newest } });
    expect(controller.savedBuffers(store.getState().savedRun.record!).metrics.stepCount).toBe(12);
    store.getState().toggleCompare(newest);
    store.getState().toggleCompare(oldest);
    await controller.compareRuns();
    expect(store.getState().compare.records?.map((r) => r.settings.quantization.nbits)).toEqual([2, 4]);
    await controller.deleteRun(newest);
    expect(store.getState()).toMatchObject({ view: 'history', savedRun: { runId: null }, compare: { runIds: [oldest], records: null } });
    expect(store.getState().history.runs.map((r) => r.id)).toEqual([oldest]);
  });
});
