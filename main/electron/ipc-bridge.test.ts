import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { BrowserWindow, IpcMainInvokeEvent } from 'electron';
import { createApiSession } from '../../app/node/workbench/api-session.js';
import { createWorkbenchBackend } from '../../app/node/workbench/workbench-backend.js';
import type { ApiResponse } from '../../app/protocol/api-messages.js';
import { API_REQUEST_CHANNEL } from '../preload/ipc-channels.js';
import { isAppUrl } from './app-origin.js';
import { registerApiIpc, sizeRefusal } from './ipc-bridge.js';
import { MAX_API_MESSAGE_BYTES } from '../../app/protocol/api-limits.js';
import { PROMPT_200_KB } from '../../app/node/test-support/long-prompt.js';
import { storiesSettings } from '../../app/node/test-support/stories.js';

// ipc-bridge.ts imports only electron's types; the stand-ins below are all it touches.
vi.mock('electron', () => ({}));

type Handler = (event: IpcMainInvokeEvent, message: unknown) => Promise<ApiResponse>;

describe('the IPC bridge', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kvscope-ipc-'));
  const backend = createWorkbenchBackend({ dataDir });
  afterAll(async () => {
    await backend.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const mainFrame = { url: 'kvscope://app/index.html', parent: null };
  const contents = { mainFrame };
  const window = { webContents: contents, isDestroyed: () => false } as unknown as BrowserWindow;
  const session = createApiSession(backend, { pickModelFolder: async () => '/picked' }, () => undefined);
  const refused: string[] = [];
  const handlers = new Map<string, Handler>();
  const ipcMain = { handle: vi.fn((channel: string, handler: Handler) => void handlers.set(channel, handler)), removeHandler: vi.fn() };
  const unregister = registerApiIpc(ipcMain, { window: () => window, session: () => session, isAppUrl: (url) => isAppUrl(url), onRefused: (reason) => refused.push(reason) });
  const handler = handlers.get(API_REQUEST_CHANNEL)!;
  const event = (sender: unknown, senderFrame: unknown) => ({ sender, senderFrame }) as unknown as IpcMainInvokeEvent;

  it('registers exactly one channel, and unregisters it', () => {
    expect([...handlers.keys()]).toEqual(['kvscope:api']);
    unregister();
    expect(ipcMain.removeHandler).toHaveBeenCalledWith('kvscope:api');
  });

  it('answers the main frame of the workbench page', async () => {
    expect(await handler(event(contents, mainFrame), { type: 'list-runs', id: 1 })).toEqual({ type: 'result', id: 1, value: [] });
    expect(await handler(event(contents, mainFrame), { type: 'pick-model-folder', id: 2 })).toEqual({ type: 'result', id: 2, value: '/picked' });
  });

  it('refuses foreign senders: subframes, other pages, other web contents, gone frames', async () => {
    const cases = [
      event(contents, { url: 'kvscope://app/index.html', parent: mainFrame }),
      event(contents, { url: 'https://attacker.example/', parent: null }),
      event(contents, { url: 'file:///etc/passwd', parent: null }),
      event({ mainFrame }, mainFrame),
      event(contents, null),
    ];
    for (const foreign of cases) {
      const answer = await handler(foreign, { type: 'list-runs', id: 5 });
      expect(answer).toMatchObject({ type: 'error', id: 5, error: { code: 'unauthorized' } });
    }
    expect(refused).toEqual([
      'the message came from a subframe (kvscope://app/index.html)',
      'the message came from a foreign page (https://attacker.example/)',
      'the message came from a foreign page (file:///etc/passwd)',
      'the message came from another web contents',
      'the sending frame is gone',
    ]);
  });

  it('refuses every request once the window is closed', async () => {
    const closed = { webContents: contents, isDestroyed: () => true } as unknown as BrowserWindow;
    const local = new Map<string, Handler>();
    registerApiIpc({ handle: (channel: string, h: Handler) => void local.set(channel, h), removeHandler: () => undefined } as never,
      { window: () => closed, session: () => session, isAppUrl: (url) => isAppUrl(url) });
    expect(await local.get(API_REQUEST_CHANNEL)!(event(contents, mainFrame), { type: 'list-runs', id: 3 }))
      .toMatchObject({ type: 'error', error: { code: 'unauthorized', message: 'Refused: the workbench window is closed.' } });
  });

  it('validates every message from a trusted sender', async () => {
    const trusted = event(contents, mainFrame);
    expect(await handler(trusted, 'list-runs')).toMatchObject({ type: 'error', id: 0, error: { code: 'invalid-request' } });
    expect(await handler(trusted, { type: 'load-run', id: 4, runId: '../../secrets' })).toMatchObject({ type: 'error', id: 4, error: { code: 'invalid-request' } });
    expect(await handler(trusted, { type: 'open-model', id: 6, source: { kind: 'url', path: 'https://x' } })).toMatchObject({ type: 'error', id: 6, error: { code: 'invalid-request' } });
    expect(await handler(trusted, { type: 'start-run', id: 7, settings: { model: 'synthetic' } })).toMatchObject({ type: 'error', id: 7, error: { code: 'invalid-request' } });
    expect(await handler(trusted, { type: 'shell', id: 8, command: 'rm -rf /' })).toMatchObject({ type: 'error', id: 8, error: { code: 'invalid-request' } });
  });

  it('refuses a message over the size limit or one JSON cannot hold, and carries a 200 KB prompt (issue 9, what to build 1)', async () => {
    const trusted = event(contents, mainFrame);
    const settings = { ...storiesSettings({ maxNewTokens: 1 }) };
    expect(await handler(trusted, { type: 'start-run', id: 9, settings: { ...settings, prompt: 'x'.repeat(MAX_API_MESSAGE_BYTES + 1) } }))
      .toMatchObject({ type: 'error', id: 9, error: { code: 'invalid-input', message: expect.stringMatching(/at most 32 MiB/) } });
    let deep: unknown = 1;
    for (let level = 0; level < 200_000; level++) deep = [deep];
    expect(await handler(trusted, { type: 'preflight', id: 10, model: deep })).toMatchObject({ type: 'error', id: 10, error: { code: 'invalid-request', message: expect.stringMatching(/cannot be read as JSON/) } });
    const cycle: Record<string, unknown> = { type: 'list-runs', id: 11 };
    cycle['self'] = cycle;
    expect(await handler(trusted, cycle)).toMatchObject({ type: 'error', id: 11, error: { code: 'invalid-request' } });
    expect(sizeRefusal({ type: 'start-run', id: 12, settings: { ...settings, prompt: PROMPT_200_KB } })).toBeNull();
  });
});
