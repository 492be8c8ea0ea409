import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defaultDataDir } from '../app/node/workbench/data-dir.js';
import { createWorkbenchBackend } from '../app/node/workbench/workbench-backend.js';
import { ensureSyntheticModel } from '../app/node/synthetic/ensure-synthetic-model.js';
import { disableOrtTelemetry } from '../app/node/worker/ort-telemetry.js';
import { KVSCOPE_VERSION } from '../app/version.js';
import { findElectronBinary } from './electron-binary.js';
import { openBrowser } from './open-browser.js';
import { defaultRendererDir, projectRoot } from './serve/renderer-dir.js';
import { DEFAULT_SERVE_PORT, startWorkbenchServer, type WorkbenchServer } from './serve/workbench-server.js';

// `npm start`: the workbench on its default model (the built-in synthetic one). With an Electron
// binary: build everything and launch the desktop app. Without one (this is checked, never faked):
// build the renderer, serve the same UI on 127.0.0.1 and print its URL (kvscope serve).
disableOrtTelemetry(); // before any onnxruntime session, here and in the Electron child (ort-telemetry.ts)
const root = projectRoot();
const electron = findElectronBinary(root);
process.exitCode = electron.path !== null ? launchElectron(electron.path) : await serveInstead(electron.reason);

function launchElectron(binary: string): number {
  if (!build(['run', 'build'], 'npm run build')) return 1;
  const env = { ...process.env };
  delete env['ELECTRON_RUN_AS_NODE'];
  const child = spawn(binary, ['.'], { cwd: root, stdio: 'inherit', env });
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? (signal !== null ? 1 : 0);
  });
  return 0;
}

async function serveInstead(reason: string): Promise<number> {
  console.log(`kvscope: no Electron binary on this machine (${reason}); building the UI to serve it in a browser instead.`);
  const rendererDir = buildRenderer();
  if (rendererDir === null) return 1;
  const backend = createWorkbenchBackend({ dataDir: defaultDataDir(), kvscopeVersion: KVSCOPE_VERSION });
  let server: WorkbenchServer;
  try {
    server = await startWorkbenchServer({ backend, rendererDir, port: DEFAULT_SERVE_PORT });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    server = await startWorkbenchServer({ backend, rendererDir, port: 0 });
  }
  console.log(`No Electron binary on this machine; serving the same UI at ${server.url}`);
  console.log(`(Open that URL in a browser on this machine; the token changes at every launch. Ctrl-C stops it.)`);
  if (openBrowser(server.url)) console.log('Opening it in your browser…');
  // The default model is built on first use (a few seconds); start now so the first open is quick.
  ensureSyntheticModel('synthetic').catch((error: unknown) => console.error(`kvscope: could not prepare the synthetic model: ${(error as Error).message}`));
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  await backend.dispose();
  return 0;
}

/** Builds the renderer for the browser (renderer/vite.config.ts → out/renderer-web); null when there is nothing to serve. */
function buildRenderer(): string | null {
  if (process.env['KVSCOPE_SKIP_BUILD'] === '1') return defaultRendererDir(root);
  if (!existsSync(join(root, 'renderer', 'index.html'))) {
    console.error('kvscope: renderer/index.html does not exist yet, so there is no UI to build; serving the API with a placeholder page.');
    return defaultRendererDir(root);
  }
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!build([vite, 'build', '--config', join(root, 'renderer', 'vite.config.ts')], 'vite build', process.execPath)) {
    const previous = defaultRendererDir(root);
    if (!existsSync(join(previous, 'index.html'))) return null;
    console.error(`kvscope: serving the previous build in ${previous}.`);
    return previous;
  }
  return join(root, 'out', 'renderer-web');
}

function build(args: string[], name: string, command = process.platform === 'win32' ? 'npm.cmd' : 'npm'): boolean {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status === 0) return true;
  console.error(`kvscope: ${name} failed (exit ${result.status ?? result.signal ?? 'unknown'}).`);
  return false;
}
