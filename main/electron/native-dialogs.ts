import { extname, join } from 'node:path';
import type { BrowserWindow, Dialog } from 'electron';
import type { HostCapabilities } from '../../app/node/workbench/api-session.js';
import { writeFileAtomic } from '../../app/node/atomic-write.js';
import { checkOutputPath } from '../../app/node/files/output-path.js';

/** Electron's side of the API: the native folder picker, and a save dialog for exports (written atomically). */
export function nativeDialogs(dialog: Pick<Dialog, 'showOpenDialog' | 'showSaveDialog'>, window: () => BrowserWindow | null, documentsDir: string): HostCapabilities {
  return {
    async pickModelFolder() {
      const owner = window();
      const options = { title: 'Open Model Folder', buttonLabel: 'Open Model', properties: ['openDirectory' as const] };
      const picked = owner === null ? await dialog.showOpenDialog(options) : await dialog.showOpenDialog(owner, options);
      return picked.canceled ? null : (picked.filePaths[0] ?? null);
    },
    async saveExport(runExport) {
      const owner = window();
      const extension = extname(runExport.fileName).slice(1);
      const options = {
        title: 'Export Run',
        defaultPath: join(documentsDir, runExport.fileName),
        filters: [{ name: extension === 'csv' ? 'CSV (per-step metrics)' : 'JSON (run record)', extensions: [extension] }],
      };
      const chosen = owner === null ? await dialog.showSaveDialog(options) : await dialog.showSaveDialog(owner, options);
      if (chosen.canceled || chosen.filePath === undefined || chosen.filePath === '') return null;
      // The dialog may return a folder's name or a read-only place: say which, rather than a bare write error.
      checkOutputPath(chosen.filePath, 'Export to');
      writeFileAtomic(chosen.filePath, new TextEncoder().encode(runExport.content));
      return chosen.filePath;
    },
  };
}
