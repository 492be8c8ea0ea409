import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, dialog, ipcMain, Menu, nativeTheme, protocol, type BrowserWindow } from 'electron';
import { createApiSession, type ApiSession } from '../../app/node/workbench/api-session.js';
import { explicitDataDir } from '../../app/node/workbench/data-dir.js';
import { createWorkbenchBackend, type WorkbenchBackend } from '../../app/node/workbench/workbench-backend.js';
import type { ModelSource, WorkbenchCommand } from '../../app/protocol/workbench-api.js';
import { KVSCOPE_VERSION } from '../../app/version.js';
import { API_EVENT_CHANNEL } from '../preload/ipc-channels.js';
import { APP_ENTRY_URL, isAppUrl } from './app-origin.js';
import { handleAppProtocol, registerAppScheme } from './app-protocol.js';
import { buildMenuTemplate } from './application-menu.js';
import { registerApiIpc } from './ipc-bridge.js';
import { createMainWindow } from './main-window.js';
import { installQuitGuard } from './quit-guard.js';
import { nativeDialogs } from './native-dialogs.js';
import { utilityProcessLauncher } from './utility-process-launch.js';

/** Where electron-vite puts each part, relative to the built main (out/main/index.js). */
export interface BuiltLayout {
  readonly mainDir: string;
}

/**
 * The Electron main process: one hardened window on the built renderer, the WorkbenchApi over one
 * validated IPC channel, the application menu and native dialogs. The engine runs in worker threads
 * (worker-client.ts), never on this thread or the page's.
 */
export function startWorkbenchApp(layout: BuiltLayout): void {
  // Before ready: the scheme's privileges, and sandboxing for every renderer, not just ours.
  registerAppScheme(protocol);
  app.enableSandbox();
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }

  const devServerUrl = !app.isPackaged ? process.env['ELECTRON_RENDERER_URL'] : undefined;
  const trusted = (url: string): boolean => isAppUrl(url, devServerUrl);
  let window: BrowserWindow | null = null;
  let session: ApiSession | null = null;
  let recent: readonly ModelSource[] = [];
  let backend: WorkbenchBackend | undefined;

  const send = (command: WorkbenchCommand): void => {
    if (window !== null && !window.isDestroyed()) window.webContents.send(API_EVENT_CHANNEL, { type: 'command', command });
  };
  const installMenu = (): void => {
    Menu.setApplicationMenu(Menu.buildFromTemplate(buildMenuTemplate({ platform: process.platform, recent, development: !app.isPackaged, send })));
  };

  const openWindow = (workbench: WorkbenchBackend): void => {
    window = createMainWindow({
      preloadPath: join(layout.mainDir, '..', 'preload', 'index.cjs'),
      url: devServerUrl ?? APP_ENTRY_URL,
      isAppUrl: trusted,
      dark: nativeTheme.shouldUseDarkColors,
      devTools: !app.isPackaged,
    });
    const contents = window.webContents;
    session = createApiSession(workbench, nativeDialogs(dialog, () => window, app.getPath('documents')), (event) => {
      if (!contents.isDestroyed()) contents.send(API_EVENT_CHANNEL, event);
    });
    const closing = session;
    window.on('closed', () => {
      closing.dispose();
      if (session === closing) session = null;
      window = null;
    });
  };

  app.on('second-instance', () => {
    if (window === null) return;
    if (window.isMinimized()) window.restore();
    window.focus();
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  app.on('activate', () => {
    if (window === null && backend !== undefined) openWindow(backend);
  });
  installQuitGuard(app, () => backend);

  void app.whenReady().then(async () => {
    // The page follows the system (CSS prefers-color-scheme); the window background follows it too.
    nativeTheme.themeSource = 'system';
    nativeTheme.on('updated', () => window?.setBackgroundColor(nativeTheme.shouldUseDarkColors ? '#1e1e1e' : '#ffffff'));
    handleAppProtocol(protocol, join(layout.mainDir, '..', 'renderer'));
    const labWorkerEntry = pathToFileURL(join(layout.mainDir, '..', 'node', 'workers', 'lab-worker.js'));
    backend = createWorkbenchBackend({
      dataDir: explicitDataDir() ?? app.getPath('userData'),
      kvscopeVersion: KVSCOPE_VERSION,
      // The worker is the tsc build (out/node), not part of this bundle: see worker-launch.ts.
      runOptions: { workerEntry: pathToFileURL(join(layout.mainDir, '..', 'node', 'workers', 'generation-worker.js')) },
      labWorkerOptions: { workerEntry: labWorkerEntry },
      // A sweep's jobs are processes of their own (sweep-job-worker.ts); this process cannot fork Node (utility-process-launch.ts).
      labJobLauncher: utilityProcessLauncher(labWorkerEntry),
      onRecentModelsChanged: (models) => {
        recent = models;
        installMenu();
      },
    });
    registerApiIpc(ipcMain, {
      window: () => window,
      session: () => session,
      isAppUrl: trusted,
      onRefused: (reason) => console.error(`kvscope: refused an IPC request: ${reason}`),
    });
    recent = await backend.recentModels();
    installMenu();
    openWindow(backend);
  });
}
