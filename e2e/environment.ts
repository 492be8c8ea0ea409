import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (this file lives in e2e/). */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Debian's Chromium and the flags it needs here (toolchain.md §4). */
export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** The fake-engine test build (`vite build --mode fake`), served by `vite preview` (playwright.config.ts webServer). */
export const FAKE_PORT = Number(process.env['KVSCOPE_E2E_FAKE_PORT'] ?? 4174);
export const FAKE_URL = `http://127.0.0.1:${FAKE_PORT}/`;

/** The tiny real model of the real-number scenario. */
export const STORIES_DIR = process.env['KVSCOPE_STORIES_DIR'] ?? resolve(PROJECT_ROOT, '..', 'shared', 'models', 'stories260k');

/** The ONNX Runtime GenAI test exports (issue 11's model layouts). */
export const ORT_GENAI_TINY_DIR = process.env['KVSCOPE_ORT_GENAI_TINY_DIR'] ?? resolve(PROJECT_ROOT, '..', 'shared', 'models', 'ort-genai-tiny');

/** Set by global-setup.ts once `kvscope serve` is up. */
export function serveUrl(): string | null {
  return process.env['KVSCOPE_E2E_SERVE_URL'] ?? null;
}

export function dataDir(): string | null {
  return process.env['KVSCOPE_E2E_DATA_DIR'] ?? null;
}

/**
 * The Electron binary Playwright can launch, or why there is none. electron ≥ 42 downloads lazily,
 * so a fresh install has no binary (toolchain.md §1); ELECTRON_OVERRIDE_DIST_PATH points at one.
 */
export function electronBinary(): { path: string } | { reason: string } {
  const executable = process.platform === 'win32' ? 'electron.exe' : process.platform === 'darwin' ? 'Electron.app/Contents/MacOS/Electron' : 'electron';
  const override = process.env['ELECTRON_OVERRIDE_DIST_PATH'];
  if (override !== undefined && override !== '') {
    const path = join(override, executable);
    return existsSync(path) ? { path } : { reason: `ELECTRON_OVERRIDE_DIST_PATH is ${override}, but ${path} does not exist.` };
  }
  const pathFile = join(PROJECT_ROOT, 'node_modules', 'electron', 'path.txt');
  if (existsSync(pathFile)) {
    const path = join(PROJECT_ROOT, 'node_modules', 'electron', 'dist', readFileSync(pathFile, 'utf8').trim());
    if (existsSync(path)) return { path };
    return { reason: `node_modules/electron/path.txt names ${path}, which does not exist.` };
  }
  return {
    reason: 'no Electron binary: node_modules/electron/path.txt is missing (electron ≥ 42 downloads it on first use, which needs github.com) ' +
      'and ELECTRON_OVERRIDE_DIST_PATH is not set. Point ELECTRON_OVERRIDE_DIST_PATH at an unpacked Electron 45 to run this project.',
  };
}
