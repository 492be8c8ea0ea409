import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

// The whole main process against a stand-in `electron` (no binary can run here): what it registers,
// in which order, and with which window.
const fake = vi.hoisted(() => {
  const calls: string[] = [];
  const appListeners = new Map<string, (event?: unknown) => void>();
  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));
  const windows: { options: Record<string, unknown>; url: string | undefined }[] = [];
  const userData = { dir: '' };
  class BrowserWindow {
    readonly record: { options: Record<string, unknown>; url: string | undefined };
    readonly webContents = {
      setWindowOpenHandler: () => undefined,
      on: () => undefined,
      send: () => undefined,
      isDestroyed: () => false,
      session: { setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined, setDevicePermissionHandler: () => undefined },
    };
    constructor(options: Record<string, unknown>) {
      this.record = { options, url: undefined };
      windows.push(this.record);
    }
    once(): void {}
    on(): void {}
    async loadURL(url: string): Promise<void> {
      this.record.url = url;
    }
  }
  const electron = {
    app: {
      isPackaged: true,
      enableSandbox: () => void calls.push('enableSandbox'),
      requestSingleInstanceLock: () => true,
      quit: () => void calls.push('quit'),
      on: (event: string, listener: (event?: unknown) => void) => void appListeners.set(event, listener),
      whenReady: () => ready,
      getPath: (name: string) => (name === 'userData' ? userData.dir : '/documents'),
    },
    protocol: {
      registerSchemesAsPrivileged: (schemes: { scheme: string }[]) => void calls.push(`registerSchemesAsPrivileged:${schemes[0]!.scheme}`),
      handle: (scheme: string) => void calls.push(`protocol.handle:${scheme}`),
    },
    ipcMain: { handle: (channel: string) => void calls.push(`ipcMain.handle:${channel}`), removeHandler: () => undefined },
    Menu: {
      buildFromTemplate: (template: unknown[]) => ({ template }),
      setApplicationMenu: () => void calls.push('setApplicationMenu'),
    },
    nativeTheme: { shouldUseDarkColors: false, themeSource: 'light', on: () => undefined },
    dialog: {},
    BrowserWindow,
  };
  return { calls, appListeners, resolveReady, windows, userData, electron };
});

vi.mock('electron', () => fake.electron);

describe('the Electron main process', () => {
  fake.userData.dir = mkdtempSync(join(tmpdir(), 'kvscope-electron-'));
  afterAll(() => rmSync(fake.userData.dir, { recursive: true, force: true }));

  it('registers the scheme and the sandbox before ready, then the protocol, IPC, menu and one hardened window', async () => {
    const { startWorkbenchApp } = await import('./workbench-app.js');
    startWorkbenchApp({ mainDir: '/app/out/main' });
    expect(fake.calls).toEqual(['registerSchemesAsPrivileged:kvscope', 'enableSandbox']);
    expect([...fake.appListeners.keys()].sort()).toEqual(['activate', 'before-quit', 'second-instance', 'window-all-closed']);

    fake.resolveReady();
    await vi.waitFor(() => expect(fake.windows).toHaveLength(1));
    expect(fake.calls).toEqual([
      'registerSchemesAsPrivileged:kvscope', 'enableSandbox', 'protocol.handle:kvscope', 'ipcMain.handle:kvscope:api', 'setApplicationMenu',
    ]);
    expect(fake.electron.nativeTheme.themeSource).toBe('system');
    const window = fake.windows[0]!;
    expect(window.url).toBe('kvscope://app/index.html');
    expect(window.options['webPreferences']).toMatchObject({
      preload: '/app/out/preload/index.cjs', contextIsolation: true, sandbox: true, nodeIntegration: false, devTools: false,
    });
    const quitting = { preventDefault: vi.fn() };
    fake.appListeners.get('before-quit')!(quitting);
    // Held until the runs are stopped and saved, then quit again (quit-guard.ts).
    expect(quitting.preventDefault).toHaveBeenCalled();
    await vi.waitFor(() => expect(fake.calls.at(-1)).toBe('quit'));
  });
});
