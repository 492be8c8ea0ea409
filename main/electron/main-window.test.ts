import { beforeEach, describe, expect, it, vi } from 'vitest';

// `electron` cannot load in plain Node (no binary here): the main-process modules get a stand-in.
const electron = vi.hoisted(() => {
  type Listener = (...args: unknown[]) => void;
  class FakeWebContents {
    readonly listeners = new Map<string, Listener>();
    windowOpenHandler: ((details: { url: string }) => unknown) | undefined;
    permissionHandler: ((contents: unknown, permission: string, callback: (granted: boolean) => void) => void) | undefined;
    checkHandler: ((contents: unknown, permission: string) => boolean) | undefined;
    deviceHandler: ((details: unknown) => boolean) | undefined;
    readonly session = {
      setPermissionRequestHandler: (handler: FakeWebContents['permissionHandler']) => void (this.permissionHandler = handler),
      setPermissionCheckHandler: (handler: FakeWebContents['checkHandler']) => void (this.checkHandler = handler),
      setDevicePermissionHandler: (handler: FakeWebContents['deviceHandler']) => void (this.deviceHandler = handler),
    };
    setWindowOpenHandler(handler: (details: { url: string }) => unknown): void {
      this.windowOpenHandler = handler;
    }
    on(event: string, listener: Listener): this {
      this.listeners.set(event, listener);
      return this;
    }
  }
  class FakeBrowserWindow {
    static readonly created: FakeBrowserWindow[] = [];
    readonly webContents = new FakeWebContents();
    readonly loadURL = vi.fn(async () => undefined);
    readonly once = vi.fn();
    constructor(readonly options: Record<string, unknown>) {
      FakeBrowserWindow.created.push(this);
    }
  }
  return { FakeBrowserWindow };
});

vi.mock('electron', () => ({ BrowserWindow: electron.FakeBrowserWindow }));

const { createMainWindow } = await import('./main-window.js');
const { APP_ENTRY_URL, isAppUrl } = await import('./app-origin.js');

describe('the workbench window', () => {
  beforeEach(() => void (electron.FakeBrowserWindow.created.length = 0));

  function open() {
    createMainWindow({ preloadPath: '/app/out/preload/index.cjs', url: APP_ENTRY_URL, isAppUrl: (url) => isAppUrl(url), dark: true, devTools: false });
    return electron.FakeBrowserWindow.created[0]!;
  }

  it('is created with hardened webPreferences and the built preload', () => {
    const window = open();
    expect(window.options['webPreferences']).toMatchObject({
      preload: '/app/out/preload/index.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      devTools: false,
    });
    expect(window.options['backgroundColor']).toBe('#1e1e1e');
    expect(window.loadURL).toHaveBeenCalledWith('kvscope://app/index.html');
  });

  it('denies every new window', () => {
    const window = open();
    for (const url of ['https://example.com/', 'kvscope://app/index.html', 'file:///etc/passwd']) {
      expect(window.webContents.windowOpenHandler!({ url })).toEqual({ action: 'deny' });
    }
  });

  it('blocks navigation and redirects away from the workbench page', () => {
    const window = open();
    for (const event of ['will-navigate', 'will-redirect']) {
      const handler = window.webContents.listeners.get(event)!;
      const away = { preventDefault: vi.fn() };
      handler(away, 'https://attacker.example/');
      expect(away.preventDefault, event).toHaveBeenCalled();
      const file = { preventDefault: vi.fn() };
      handler(file, 'file:///home/user/model');
      expect(file.preventDefault, event).toHaveBeenCalled();
      const home = { preventDefault: vi.fn() };
      handler(home, 'kvscope://app/index.html');
      expect(home.preventDefault, event).not.toHaveBeenCalled();
    }
    const frame = { url: 'https://attacker.example/', preventDefault: vi.fn() };
    window.webContents.listeners.get('will-frame-navigate')!(frame);
    expect(frame.preventDefault).toHaveBeenCalled();
    const webview = { preventDefault: vi.fn() };
    window.webContents.listeners.get('will-attach-webview')!(webview);
    expect(webview.preventDefault).toHaveBeenCalled();
  });

  it('refuses permission requests except clipboard writes', () => {
    const window = open();
    const answers: Record<string, boolean> = {};
    for (const permission of ['media', 'geolocation', 'notifications', 'openExternal', 'clipboard-sanitized-write']) {
      window.webContents.permissionHandler!({}, permission, (granted) => void (answers[permission] = granted));
    }
    expect(answers).toEqual({ media: false, geolocation: false, notifications: false, openExternal: false, 'clipboard-sanitized-write': true });
  });

  it('answers permission checks "denied" by default too, and every device request (issue 9, failure 8)', () => {
    const window = open();
    const check = window.webContents.checkHandler!;
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'hid', 'serial', 'usb', 'fullscreen', 'unknown-future-permission']) {
      expect(check({}, permission), permission).toBe(false);
    }
    expect(check({}, 'clipboard-sanitized-write')).toBe(true);
    expect(window.webContents.deviceHandler!({ deviceType: 'usb', origin: 'kvscope://app' })).toBe(false);
  });
});

describe('isAppUrl', () => {
  it('trusts the app scheme and, in development, the dev server only', () => {
    expect(isAppUrl('kvscope://app/index.html')).toBe(true);
    expect(isAppUrl('kvscope://other/index.html')).toBe(false);
    expect(isAppUrl('file:///app/out/renderer/index.html')).toBe(false);
    expect(isAppUrl('http://localhost:5173/')).toBe(false);
    expect(isAppUrl('http://localhost:5173/', 'http://localhost:5173')).toBe(true);
    expect(isAppUrl('http://localhost:5174/', 'http://localhost:5173')).toBe(false);
    expect(isAppUrl('not a url')).toBe(false);
  });
});
