import { describe, expect, it, vi } from 'vitest';
import type { MenuItemConstructorOptions } from 'electron';
import type { WorkbenchCommand } from '../../app/protocol/workbench-api.js';
import { buildMenuTemplate } from './application-menu.js';

vi.mock('electron', () => ({}));

function items(template: readonly MenuItemConstructorOptions[]): MenuItemConstructorOptions[] {
  return template.flatMap((item) => [item, ...(Array.isArray(item.submenu) ? items(item.submenu) : [])]);
}

function byId(template: readonly MenuItemConstructorOptions[], id: string): MenuItemConstructorOptions {
  const found = items(template).find((item) => item.id === id);
  if (found === undefined) throw new Error(`no menu item ${id}`);
  return found;
}

function click(item: MenuItemConstructorOptions): void {
  (item.click as () => void)();
}

describe('the application menu', () => {
  const sent: WorkbenchCommand[] = [];
  const template = buildMenuTemplate({
    platform: 'linux',
    development: false,
    recent: [{ kind: 'folder', path: '/models/R&D/stories260k' }, { kind: 'synthetic' }],
    send: (command) => void sent.push(command),
  });

  it('has the workbench accelerators', () => {
    expect(byId(template, 'open-model').accelerator).toBe('CmdOrCtrl+O');
    expect(byId(template, 'run').accelerator).toBe('CmdOrCtrl+Enter');
    expect(byId(template, 'stop').accelerator).toBe('CmdOrCtrl+.');
    expect(byId(template, 'export-json').accelerator).toBe('CmdOrCtrl+Shift+E');
    expect(byId(template, 'export-csv').accelerator).toBe('CmdOrCtrl+Alt+E');
    const accelerators = items(template).map((item) => item.accelerator).filter((accelerator) => accelerator !== undefined);
    expect(new Set(accelerators).size).toBe(accelerators.length);
  });

  it('sends a WorkbenchCommand for each action', () => {
    sent.length = 0;
    for (const id of ['open-model', 'run', 'stop', 'export-json', 'export-csv']) click(byId(template, id));
    expect(sent).toEqual([{ type: 'open-model' }, { type: 'run' }, { type: 'stop' }, { type: 'export', format: 'json' }, { type: 'export', format: 'csv' }]);
  });

  it('lists recent models with Cmd/Ctrl+digit accelerators', () => {
    sent.length = 0;
    const recent = byId(template, 'open-recent').submenu as MenuItemConstructorOptions[];
    expect(recent.map((item) => [item.label, item.accelerator])).toEqual([
      ['/models/R&&D/stories260k', 'CmdOrCtrl+1'],
      ['Synthetic model (built in)', 'CmdOrCtrl+2'],
    ]);
    recent.forEach(click);
    expect(sent).toEqual([{ type: 'open-recent', source: { kind: 'folder', path: '/models/R&D/stories260k' } }, { type: 'open-recent', source: { kind: 'synthetic' } }]);
  });

  it('says when there is nothing recent, and keeps the inspector out of release builds', () => {
    const empty = buildMenuTemplate({ platform: 'darwin', development: false, recent: [], send: () => undefined });
    expect(byId(empty, 'open-recent').submenu).toEqual([{ label: 'No Recent Models', enabled: false }]);
    expect(empty[0]).toEqual({ role: 'appMenu' });
    expect(items(empty).some((item) => item.role === 'toggleDevTools')).toBe(false);
    const development = buildMenuTemplate({ platform: 'linux', development: true, recent: [], send: () => undefined });
    expect(items(development).some((item) => item.role === 'toggleDevTools')).toBe(true);
  });
});
