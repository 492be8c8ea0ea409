import type { WorkbenchCommand } from '../../app/protocol/workbench-api.js';

/** The DOM surface the drop handler needs; written out because main/ is compiled without the DOM library. */
export interface DropEventLike {
  preventDefault(): void;
  readonly dataTransfer: { readonly files: ArrayLike<unknown> } | null;
}

export interface DropTargetLike {
  addEventListener(type: 'dragover' | 'drop', listener: (event: DropEventLike) => void, options?: { capture?: boolean }): void;
}

/**
 * A file or folder dropped anywhere on the window becomes a `model-dropped` command with its path.
 * Only the preload can get that path (`webUtils.getPathForFile`; `File.path` is gone from current
 * Electron), which is why this lives here and not in the renderer. Default handling is prevented
 * too: it would navigate the window to the file.
 */
export function installDropHandler(target: DropTargetLike, pathForFile: (file: unknown) => string, dispatch: (command: WorkbenchCommand) => void): void {
  // Capture phase: a drop zone in the page that stops propagation still gets its path delivered.
  target.addEventListener('dragover', (event) => event.preventDefault(), { capture: true });
  target.addEventListener('drop', (event) => {
    event.preventDefault();
    const file = event.dataTransfer?.files[0];
    if (file === undefined) return;
    const path = pathForFile(file);
    if (path !== '') dispatch({ type: 'model-dropped', path });
  }, { capture: true });
}
