import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type ElectronBinary = { readonly path: string } | { readonly path: null; readonly reason: string };

/**
 * Where an Electron executable is, found the way the `electron` package's own index.js finds it but
 * without its side effect: requiring `electron` in Node downloads the binary when it is missing
 * (and throws offline). Checked in order: ELECTRON_OVERRIDE_DIST_PATH (electron's hook),
 * ELECTRON_EXEC_PATH (electron-vite's hook), then node_modules/electron/dist via its path.txt.
 */
export function findElectronBinary(root: string, env: NodeJS.ProcessEnv = process.env): ElectronBinary {
  const packageDir = join(root, 'node_modules', 'electron');
  const pathFile = join(packageDir, 'path.txt');
  const relative = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : undefined;
  const override = env['ELECTRON_OVERRIDE_DIST_PATH'];
  if (override !== undefined && override !== '') {
    const candidate = join(override, relative ?? 'electron');
    return existsSync(candidate) ? { path: candidate } : { path: null, reason: `ELECTRON_OVERRIDE_DIST_PATH is set but ${candidate} does not exist` };
  }
  const exec = env['ELECTRON_EXEC_PATH'];
  if (exec !== undefined && exec !== '') {
    return existsSync(exec) ? { path: exec } : { path: null, reason: `ELECTRON_EXEC_PATH is set but ${exec} does not exist` };
  }
  if (!existsSync(join(packageDir, 'package.json'))) return { path: null, reason: 'the electron package is not installed' };
  if (relative === undefined) return { path: null, reason: 'the electron package has no downloaded binary (no node_modules/electron/path.txt)' };
  const candidate = join(packageDir, 'dist', relative);
  return existsSync(candidate) ? { path: candidate } : { path: null, reason: `the electron binary ${candidate} is missing` };
}
