import { BrowserWindow, type BrowserWindowConstructorOptions } from 'electron';
import { denyPermissionsByDefault } from './permissions.js';

export interface MainWindowOptions {
  /** the built preload (one CommonJS file: sandboxed preloads cannot load ES modules) */
  readonly preloadPath: string;
  /** the page: kvscope://app/index.html, or the dev server in development */
  readonly url: string;
  /** whether a URL is the workbench's own page (app-origin.ts) */
  readonly isAppUrl: (url: string) => boolean;
  /** dark background before the page paints, so the window does not flash white (Netron does the same) */
  readonly dark: boolean;
  /** development only: allow the inspector */
  readonly devTools: boolean;
}

/** The BrowserWindow options: Electron's security checklist (#2–#4, #6, #9, #10) spelled out, not left to defaults. */
export function mainWindowOptions(options: Pick<MainWindowOptions, 'preloadPath' | 'dark' | 'devTools'>): BrowserWindowConstructorOptions {
  return {
    width: 1280,
    height: 860,
    minWidth: 900,
    minHeight: 600,
    title: 'kvscope',
    show: false,
    backgroundColor: options.dark ? '#1e1e1e' : '#ffffff',
    webPreferences: {
      preload: options.preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
      devTools: options.devTools,
    },
  };
}

/**
 * The one workbench window. Beyond its options: new windows are denied (#14), navigation away from
 * the workbench page is blocked (#13), <webview> cannot attach, and every permission request and
 * check (camera, notifications, devices, …) is refused except writing to the clipboard (permissions.ts).
 */
export function createMainWindow(options: MainWindowOptions): BrowserWindow {
  const window = new BrowserWindow(mainWindowOptions(options));
  const contents = window.webContents;
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  const blockForeign = (event: { preventDefault(): void }, url: string): void => {
    if (!options.isAppUrl(url)) event.preventDefault();
  };
  contents.on('will-navigate', blockForeign);
  contents.on('will-redirect', blockForeign);
  contents.on('will-frame-navigate', (event) => {
    if (!options.isAppUrl(event.url)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  denyPermissionsByDefault(contents.session);
  window.once('ready-to-show', () => window.show());
  void window.loadURL(options.url);
  return window;
}
