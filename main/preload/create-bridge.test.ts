import { describe, expect, it, vi } from 'vitest';
import type { RunEventHandlers } from '../../app/protocol/workbench-api.js';
import { storiesSettings } from '../../app/node/test-support/stories.js';
import { createKvscopeBridge, type BridgeIpc } from './create-bridge.js';
import { API_EVENT_CHANNEL, API_REQUEST_CHANNEL } from './ipc-channels.js';

function fakeIpc(answer: (message: { type: string; id: number }) => unknown) {
  const sent: unknown[] = [];
  let listener: ((event: unknown, message: unknown) => void) | undefined;
  const ipc: BridgeIpc = {
    invoke: async (channel, message) => {
      expect(channel).toBe(API_REQUEST_CHANNEL);
      sent.push(message);
      return answer(message as { type: string; id: number });
    },
    on: (channel, registered) => {
      expect(channel).toBe(API_EVENT_CHANNEL);
      listener = registered;
    },
  };
  return { ipc, sent, emit: (message: unknown) => listener!({ sender: 'IpcRendererEvent' }, message) };
}

function recordingHandlers() {
  const seen: unknown[] = [];
  const handlers: RunEventHandlers = {
    onText: (delta) => void seen.push(['text', delta]),
    onMetrics: (steps) => void seen.push(['metrics', steps.length]),
    onDone: (_result, savedRunId) => void seen.push(['done', savedRunId]),
    onError: (error) => void seen.push(['error', error.code]),
  };
  return { seen, handlers };
}

describe('window.kvscope (the preload bridge)', () => {
  it('numbers requests and resolves with the reply envelope', async () => {
    const { ipc, sent } = fakeIpc((message) => ({ type: 'result', id: message.id, value: [] }));
    const { bridge } = createKvscopeBridge(ipc);
    expect(await bridge.listRuns()).toEqual({ type: 'result', id: 1, value: [] });
    expect(await bridge.openModel({ kind: 'synthetic' })).toEqual({ type: 'result', id: 2, value: [] });
    expect(sent).toEqual([{ type: 'list-runs', id: 1 }, { type: 'open-model', id: 2, source: { kind: 'synthetic' } }]);
  });

  it('routes run events by request id to the handlers registered before sending, never passing the IPC event', async () => {
    const { ipc, emit } = fakeIpc((message) => ({ type: 'result', id: message.id, value: { runId: 'r1' } }));
    const { bridge } = createKvscopeBridge(ipc);
    const first = recordingHandlers();
    const second = recordingHandlers();
    await bridge.startRun(storiesSettings(), first.handlers);
    await bridge.startRun(storiesSettings(), second.handlers);
    emit({ type: 'run-text', id: 2, runId: 'r2', delta: 'b', tokenIds: [2] });
    emit({ type: 'run-text', id: 1, runId: 'r1', delta: 'a', tokenIds: [1] });
    emit({ type: 'run-metrics', id: 1, runId: 'r1', steps: [{}, {}] });
    emit({ type: 'run-done', id: 1, runId: 'r1', result: {}, savedRunId: 'r1' });
    emit({ type: 'run-text', id: 1, runId: 'r1', delta: 'late', tokenIds: [] });
    emit({ type: 'run-error', id: 2, runId: 'r2', error: { code: 'generation-failed', message: 'x' } });
    expect(first.seen).toEqual([['text', 'a'], ['metrics', 2], ['done', 'r1']]);
    expect(second.seen).toEqual([['text', 'b'], ['error', 'generation-failed']]);
  });

  it('delivers commands to listeners until they unsubscribe', () => {
    const { ipc, emit } = fakeIpc(() => undefined);
    const { bridge, dispatchCommand } = createKvscopeBridge(ipc);
    const commands: unknown[] = [];
    const unsubscribe = bridge.onCommand((command) => void commands.push(command));
    emit({ type: 'command', command: { type: 'run' } });
    dispatchCommand({ type: 'model-dropped', path: '/models/x' });
    unsubscribe();
    emit({ type: 'command', command: { type: 'stop' } });
    expect(commands).toEqual([{ type: 'run' }, { type: 'model-dropped', path: '/models/x' }]);
  });

  it('turns a failed invoke into an error reply and forgets the run', async () => {
    const { ipc, emit } = fakeIpc(() => {
      throw new Error('No handler registered for kvscope:api');
    });
    const { bridge } = createKvscopeBridge(ipc);
    const run = recordingHandlers();
    const reply = await bridge.startRun(storiesSettings(), run.handlers);
    expect(reply).toMatchObject({ type: 'error', id: 1, error: { code: 'internal', message: expect.stringContaining('No handler registered') } });
    emit({ type: 'run-text', id: 1, runId: 'r', delta: 'x', tokenIds: [] });
    expect(run.seen).toEqual([]);
  });
});

describe('the preload entry', () => {
  it('exposes window.kvscope with one function per capability and never ipcRenderer', async () => {
    const exposed: [string, Record<string, unknown>][] = [];
    const listeners = new Map<string, (event: unknown) => void>();
    vi.stubGlobal('window', { addEventListener: (type: string, listener: (event: unknown) => void) => void listeners.set(type, listener) });
    const ipcRenderer = { invoke: vi.fn(), on: vi.fn(), send: vi.fn(), sendSync: vi.fn() };
    vi.doMock('electron', () => ({
      contextBridge: { exposeInMainWorld: (key: string, api: Record<string, unknown>) => void exposed.push([key, api]) },
      ipcRenderer,
      webUtils: { getPathForFile: (file: { name: string }) => `/dropped/${file.name}` },
    }));
    await import('./index.js');
    expect(exposed.map(([key]) => key)).toEqual(['kvscope']);
    const api = exposed[0]![1];
    expect(Object.keys(api).sort()).toEqual([
      'cancelRun', 'checkRun', 'deleteRun', 'environment', 'exportRun', 'host', 'labCancelSweep', 'labExportSweep', 'labListSweeps', 'labLoadPoint',
      'labLoadSweep', 'labStartSweep', 'listFolder', 'listRuns', 'loadRun', 'onCommand', 'openModel', 'pickModelFolder', 'preflight', 'protocolVersion',
      'recentModels', 'startRun',
    ]);
    expect(Object.values(api).some((value) => value === ipcRenderer || value === ipcRenderer.invoke || value === ipcRenderer.send)).toBe(false);
    expect(ipcRenderer.on).toHaveBeenCalledWith('kvscope:event', expect.any(Function));

    // A folder dropped on the window becomes a model-dropped command with its real path.
    const commands: unknown[] = [];
    (api['onCommand'] as (listener: (command: unknown) => void) => void)((command) => commands.push(command));
    const drop = { preventDefault: vi.fn(), dataTransfer: { files: [{ name: 'stories260k' }] } };
    listeners.get('drop')!(drop);
    expect(drop.preventDefault).toHaveBeenCalled();
    expect(commands).toEqual([{ type: 'model-dropped', path: '/dropped/stories260k' }]);
    const over = { preventDefault: vi.fn() };
    listeners.get('dragover')!(over);
    expect(over.preventDefault).toHaveBeenCalled();
    vi.unstubAllGlobals();
  });
});
