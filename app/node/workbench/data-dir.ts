import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the workbench keeps runs and recent models when no folder is given: `KVSCOPE_DATA_DIR`, else
 * the platform's per-user data folder (the one Electron's `app.getPath('userData')` also uses), so
 * `kvscope serve` and the desktop app share one history.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const explicit = explicitDataDir(env);
  if (explicit !== null) return explicit;
  if (platform === 'win32') return join(env['APPDATA'] ?? join(homedir(), 'AppData', 'Roaming'), 'kvscope');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'kvscope');
  return join(env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'kvscope');
}

/** `KVSCOPE_DATA_DIR` when set: every host honours it (the Electron app falls back to its userData folder). */
export function explicitDataDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const explicit = env['KVSCOPE_DATA_DIR'];
  return explicit !== undefined && explicit !== '' ? explicit : null;
}
