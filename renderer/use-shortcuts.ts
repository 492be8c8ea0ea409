import { useEffect } from 'react';
import type { WorkbenchController } from './controller/workbench-controller.js';
import { isRunActive } from './store/run-slice.js';

/**
 * Ctrl/Cmd+O open, Ctrl/Cmd+Enter run, Esc or Ctrl/Cmd+. stop (the latter is the menu's Stop
 * accelerator in Electron, bound here too so that serve mode answers the same chords). In Electron the application menu owns Ctrl+O
 * (its accelerator opens the native picker and sends `open-model`), so the page does not bind it
 * there; run and stop are safe to receive twice (a second start or stop is ignored).
 */
export function useShortcuts(controller: WorkbenchController): void {
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent): void => {
      const mod = event.ctrlKey || event.metaKey;
      if (mod && !event.altKey && !event.shiftKey && event.key.toLowerCase() === 'o') {
        if (controller.api.host === 'electron') return;
        event.preventDefault();
        void controller.openModelDialog();
        return;
      }
      if (mod && event.key === 'Enter') {
        event.preventDefault();
        void controller.startRun();
        return;
      }
      const stop = (event.key === 'Escape' && !event.defaultPrevented) || (mod && !event.altKey && event.key === '.');
      if (stop && isRunActive(controller.store.getState().run.status)) {
        event.preventDefault();
        void controller.cancelRun();
      }
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [controller]);
}

/** The modifier the shortcuts use here: ⌘ on macOS, Ctrl elsewhere. */
function modifier(): string {
  const platform = typeof navigator === 'undefined' ? '' : navigator.platform;
  return /^Mac/.test(platform) ? '⌘' : 'Ctrl';
}

/**
 * How a command's shortcut is written in the UI, the one chord shown for it (Stop answers Esc and
 * Ctrl+. alike; Esc is the one named). Both hosts bind these three; the recent-model chords
 * (Ctrl+1…9) are the desktop menu's only and are never shown in the browser, where they switch tabs.
 */
export function shortcutLabel(command: 'open' | 'run' | 'stop', _host: 'electron' | 'browser'): string {
  switch (command) {
    case 'open': return `${modifier()}+O`;
    case 'run': return `${modifier()}+Enter`;
    case 'stop': return 'Esc';
  }
}
