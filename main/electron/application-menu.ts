import type { MenuItemConstructorOptions } from 'electron';
import type { ModelSource, WorkbenchCommand } from '../../app/protocol/workbench-api.js';

export interface MenuOptions {
  readonly platform: NodeJS.Platform;
  readonly recent: readonly ModelSource[];
  /** development builds get the inspector and reload */
  readonly development: boolean;
  /** delivers a command to the window's page (it decides what to do: it owns the state) */
  send(command: WorkbenchCommand): void;
}

/** Recent entries beyond this get no Cmd/Ctrl+digit accelerator (Netron's convention: 1…9). */
const DIGIT_ACCELERATORS = 9;

/**
 * The application menu. Every workbench action is a WorkbenchCommand sent to the page, so the menu,
 * its accelerators and the page's buttons do the same thing. Stop is CmdOrCtrl+. (the macOS cancel
 * chord) rather than Esc: a menu accelerator takes its key from every text field and dialog in the
 * page, and Esc belongs to those.
 */
export function buildMenuTemplate(options: MenuOptions): MenuItemConstructorOptions[] {
  const mac = options.platform === 'darwin';
  const send = (command: WorkbenchCommand) => () => options.send(command);
  const recentItems: MenuItemConstructorOptions[] = options.recent.length === 0
    ? [{ label: 'No Recent Models', enabled: false }]
    : options.recent.map((source, index) => ({
      label: recentLabel(source),
      ...(index < DIGIT_ACCELERATORS ? { accelerator: `CmdOrCtrl+${index + 1}` } : {}),
      click: send({ type: 'open-recent', source }),
    }));
  const template: MenuItemConstructorOptions[] = [
    ...(mac ? [{ role: 'appMenu' as const }] : []),
    {
      label: '&File',
      submenu: [
        { id: 'open-model', label: 'Open Model…', accelerator: 'CmdOrCtrl+O', click: send({ type: 'open-model' }) },
        { id: 'open-recent', label: 'Open Recent', submenu: recentItems },
        { type: 'separator' },
        { id: 'export-json', label: 'Export Run as JSON…', accelerator: 'CmdOrCtrl+Shift+E', click: send({ type: 'export', format: 'json' }) },
        { id: 'export-csv', label: 'Export Run as CSV…', accelerator: 'CmdOrCtrl+Alt+E', click: send({ type: 'export', format: 'csv' }) },
        { type: 'separator' },
        mac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: '&Run',
      submenu: [
        { id: 'run', label: 'Run', accelerator: 'CmdOrCtrl+Enter', click: send({ type: 'run' }) },
        { id: 'stop', label: 'Stop', accelerator: 'CmdOrCtrl+.', click: send({ type: 'stop' }) },
      ],
    },
    {
      label: '&View',
      submenu: [
        ...(options.development ? [{ role: 'reload' as const }, { role: 'toggleDevTools' as const }, { type: 'separator' as const }] : []),
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
  ];
  return template;
}

function recentLabel(source: ModelSource): string {
  if (source.kind !== 'folder') return source.kind === 'synthetic' ? 'Synthetic model (built in)' : 'Synthetic hybrid model (built in)';
  // Menus drop `&` as a mnemonic marker on Windows and Linux; doubling keeps it in folder names.
  return source.path.replace(/&/g, '&&');
}
