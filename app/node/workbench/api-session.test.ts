import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { GenerationResult } from '../../engine/generation-result.js';
import type { ApiEvent } from '../../protocol/api-messages.js';
import type { RunHandle, RunHandlers, StartRun } from '../../protocol/run-handle.js';
import { sampleResult } from '../../protocol/test-support/sample-messages.js';
import { storiesSettings } from '../test-support/stories.js';
import { createApiSession } from './api-session.js';
import { createWorkbenchBackend } from './workbench-backend.js';

/** A run the test drives by hand: no worker, no model. */
function scriptedRuns() {
  const runs: { handlers: RunHandlers; cancel: ReturnType<typeof vi.fn>; finish(result: GenerationResult): void; fail(error: Error): void }[] = [];
  const startRun: StartRun = (_settings, handlers) => {
    let resolve!: (result: GenerationResult) => void;
    let reject!: (error: Error) => void;
    const done = new Promise<GenerationResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => undefined);
    const cancel = vi.fn();
    runs.push({ handlers, cancel, finish: resolve, fail: reject });
    const handle: RunHandle = { id: runs.length, done, cancel, dispose: () => reject(new Error('disposed')) };
    return handle;
  };
  return { runs, startRun };
}

describe('an API session', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kvscope-session-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('answers the run check and the folder listing, and refuses a folder the host does not have', async () => {
    const backend = createWorkbenchBackend({ dataDir, startRun: scriptedRuns().startRun, homeDir: dataDir, probeExecutionProvider: async () => ({ ok: false, message: 'no adapter' }) });
    const session = createApiSession(backend, { pickModelFolder: async () => null }, () => undefined);
    const check = await session.handle({ type: 'check-run', id: 5, settings: { ...storiesSettings(), cacheMode: 'quantized', prompt: 'Once upon a time', maxNewTokens: 8 } });
    expect(check).toMatchObject({ type: 'result', id: 5, value: { ok: false, promptTokens: 5, refusal: { message: expect.stringMatching(/^Group size \(64\) must be a divisor of \(160\)/) } } });
    // an execution provider the probe found unusable is the refusal, with its reason
    const webgpu = await session.handle({ type: 'check-run', id: 6, settings: { ...storiesSettings(), prompt: 'Once upon a time', maxNewTokens: 8, executionProvider: 'webgpu' } });
    expect(webgpu).toMatchObject({ type: 'result', id: 6, value: { ok: false, refusal: { message: expect.stringContaining('no adapter') } } });
    expect(await session.handle({ type: 'list-folder', id: 7, path: null })).toMatchObject({ type: 'result', id: 7, value: { path: dataDir } });
    expect(await session.handle({ type: 'list-folder', id: 8, path: join(dataDir, 'nope') })).toMatchObject({
      type: 'error', id: 8, error: { code: 'invalid-input', message: expect.stringContaining('does not exist on the host') },
    });
    await backend.dispose();
  });

  it('tags run events with the start-run request id and the run id', async () => {
    const scripted = scriptedRuns();
    const backend = createWorkbenchBackend({ dataDir, startRun: scripted.startRun });
    const events: ApiEvent[] = [];
    const session = createApiSession(backend, { pickModelFolder: async () => null }, (event) => void events.push(event));
    const reply = await session.handle({ type: 'start-run', id: 41, settings: storiesSettings() });
    expect(reply).toMatchObject({ type: 'result', id: 41, value: { runId: expect.any(String) } });
    const runId = (reply as { value: { runId: string } }).value.runId;
    scripted.runs[0]!.handlers.onText!('Once', [403]);
    scripted.runs[0]!.fail(Object.assign(new Error('the cache refused'), { name: 'CacheError' }));
    await vi.waitFor(() => expect(events).toHaveLength(2));
    expect(events).toEqual([
      { type: 'run-text', id: 41, runId, delta: 'Once', tokenIds: [403] },
      { type: 'run-error', id: 41, runId, error: { code: 'internal', message: 'CacheError: the cache refused' } },
    ]);
    await backend.dispose();
  });

  it('stops its runs and goes quiet when disposed', async () => {
    const scripted = scriptedRuns();
    const backend = createWorkbenchBackend({ dataDir, startRun: scripted.startRun });
    const events: ApiEvent[] = [];
    const session = createApiSession(backend, { pickModelFolder: async () => null }, (event) => void events.push(event));
    await session.handle({ type: 'start-run', id: 1, settings: storiesSettings() });
    session.dispose();
    expect(scripted.runs[0]!.cancel).toHaveBeenCalled();
    scripted.runs[0]!.handlers.onText!('late', []);
    expect(events).toEqual([]);
    expect(await session.handle({ type: 'list-runs', id: 2 })).toMatchObject({ type: 'error', id: 2, error: { code: 'internal' } });
    await backend.dispose();
  });

  it('cancels a live run on request, and ignores a run that already ended', async () => {
    const scripted = scriptedRuns();
    const backend = createWorkbenchBackend({ dataDir, startRun: scripted.startRun });
    const session = createApiSession(backend, { pickModelFolder: async () => null }, () => undefined);
    const reply = await session.handle({ type: 'start-run', id: 1, settings: storiesSettings() });
    const runId = (reply as { value: { runId: string } }).value.runId;
    expect(await session.handle({ type: 'cancel-run', id: 2, runId })).toEqual({ type: 'result', id: 2, value: null });
    expect(scripted.runs[0]!.cancel).toHaveBeenCalledTimes(1);
    expect(await session.handle({ type: 'cancel-run', id: 3, runId: '20200101-000000-abcdef' })).toEqual({ type: 'result', id: 3, value: null });
    await backend.dispose();
  });

  it('saves a finished run and offers its export to the host, which reports where it saved it', async () => {
    const scripted = scriptedRuns();
    const backend = createWorkbenchBackend({ dataDir: join(dataDir, 'export'), startRun: scripted.startRun });
    const saveExport = vi.fn(async () => '/home/user/run.csv');
    const events: ApiEvent[] = [];
    const session = createApiSession(backend, { pickModelFolder: async () => null, saveExport }, (event) => void events.push(event));
    const missing = await session.handle({ type: 'export-run', id: 1, runId: 'nope', format: 'csv' });
    expect(missing).toMatchObject({ type: 'error', id: 1, error: { code: 'invalid-input', message: expect.stringMatching(/nope\.json does not exist/) } });
    expect(saveExport).not.toHaveBeenCalled();

    const started = await session.handle({ type: 'start-run', id: 2, settings: storiesSettings() });
    const runId = (started as { value: { runId: string } }).value.runId;
    scripted.runs[0]!.finish(sampleResult());
    await vi.waitFor(() => expect(events).toEqual([expect.objectContaining({ type: 'run-done', id: 2, runId, savedRunId: runId })]));
    const exported = await session.handle({ type: 'export-run', id: 3, runId, format: 'csv' });
    expect(exported).toMatchObject({ type: 'result', id: 3, value: { fileName: `kvscope-run-${runId}.csv`, saved: '/home/user/run.csv' } });
    expect(saveExport).toHaveBeenCalledWith(expect.objectContaining({ fileName: `kvscope-run-${runId}.csv`, saved: null }));
    await backend.dispose();
  });
});
