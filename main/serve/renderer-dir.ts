import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGuardedTextSync } from '../../app/node/files/guarded-read.js';

/**
 * The project root: the nearest folder above this module whose package.json is kvscope's. Found by
 * walking up rather than by a fixed `../..`, because this module runs from main/serve/ (tsx) and
 * from out/node/main/serve/ (the built CLI).
 */
export function projectRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let folder = from;
  while (true) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest) && isKvscopeManifest(manifest)) return folder;
    const parent = dirname(folder);
    if (parent === folder) throw new Error(`kvscope's package.json was not found above ${from}.`);
    folder = parent;
  }
}

/**
 * The built renderer to serve: out/renderer (`npm run build`, electron-vite) or out/renderer-web
 * (`npm run build:web`, plain vite), whichever was built last; out/renderer when neither exists.
 */
export function defaultRendererDir(root: string = projectRoot()): string {
  const candidates = [join(root, 'out', 'renderer'), join(root, 'out', 'renderer-web')];
  const built = candidates
    .map((dir) => ({ dir, modifiedMs: statSync(join(dir, 'index.html'), { throwIfNoEntry: false })?.mtimeMs }))
    .filter((candidate): candidate is { dir: string; modifiedMs: number } => candidate.modifiedMs !== undefined)
    .sort((a, b) => b.modifiedMs - a.modifiedMs);
  return built[0]?.dir ?? candidates[0]!;
}

function isKvscopeManifest(path: string): boolean {
  try {
    return (JSON.parse(readGuardedTextSync(path, 'input')) as { name?: unknown }).name === 'kvscope';
  } catch {
    return false;
  }
}
