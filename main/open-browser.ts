import { spawn } from 'node:child_process';

/**
 * Opens a URL in the user's browser when there is a desktop to show it on; returns whether it tried.
 * Headless machines (no DISPLAY or WAYLAND_DISPLAY on Linux, CI) only get the printed URL.
 */
export function openBrowser(url: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
  if (env['KVSCOPE_NO_BROWSER'] === '1' || env['CI'] === 'true') return false;
  const command = browserCommand(url, env, platform);
  if (command === null) return false;
  try {
    const child = spawn(command[0], command.slice(1), { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

export function browserCommand(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): [string, ...string[]] | null {
  if (platform === 'darwin') return ['open', url];
  // `start` is a cmd built-in; its first quoted argument is a window title, hence the empty one.
  if (platform === 'win32') return ['cmd', '/c', 'start', '""', url];
  const display = (env['DISPLAY'] ?? '') !== '' || (env['WAYLAND_DISPLAY'] ?? '') !== '';
  return display ? ['xdg-open', url] : null;
}
