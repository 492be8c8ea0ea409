import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from './environment.js';

/**
 * Builds kvscope (`npm run build`: the CLI with its worker, and the Electron bundles including the
 * renderer) and starts `kvscope serve` on a free port with a fresh data folder, so the browser
 * project runs against the real engine. The server prints its URL with the per-launch token; that
 * URL reaches the tests through KVSCOPE_E2E_SERVE_URL. KVSCOPE_E2E_SKIP_BUILD=1 reuses out/.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  if (process.env['KVSCOPE_E2E_SKIP_BUILD'] !== '1') build();
  const dataDir = mkdtempSync(join(tmpdir(), 'kvscope-e2e-'));
  // Without a GPU and without Vulkan pointed at SwiftShader there is no WebGPU adapter: the
  // workbench must then not offer WebGPU (KVSCOPE_E2E_KEEP_VULKAN=1 keeps the caller's Vulkan setup).
  const env = { ...process.env };
  if (process.env['KVSCOPE_E2E_KEEP_VULKAN'] !== '1') {
    delete env['VK_ICD_FILENAMES'];
    delete env['VK_DRIVER_FILES'];
    delete env['VK_ADD_DRIVER_FILES'];
  }
  const server = spawn(process.execPath, [join(PROJECT_ROOT, 'out/node/main/cli/kvscope.js'), 'serve', '--port', '0', '--data-dir', dataDir], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  const url = await serverUrl(server, 60_000);
  process.env['KVSCOPE_E2E_SERVE_URL'] = url;
  process.env['KVSCOPE_E2E_DATA_DIR'] = dataDir;
  console.log(`e2e: kvscope serve at ${new URL(url).origin} (data ${dataDir})`);
  return async () => {
    server.kill('SIGTERM');
    await new Promise((resolve) => {
      if (server.exitCode !== null) resolve(undefined);
      else server.once('exit', resolve);
    });
    rmSync(dataDir, { recursive: true, force: true });
  };
}

/** `npm run build`: the CLI with its worker (tsc) and the Electron bundles including the renderer. */
function build(): void {
  const result = spawnSync('npm', ['run', '-s', 'build'], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`e2e setup: \`npm run build\` failed (exit ${result.status}); fix the build, then run the tests again.`);
}

/** The URL (with its token) a starting `kvscope serve` prints; specs that start a host of their own use it too. */
export function serverUrl(server: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => fail(`kvscope serve printed no URL within ${timeoutMs / 1000} s`), timeoutMs);
    const fail = (why: string): void => {
      clearTimeout(timer);
      server.kill('SIGTERM');
      reject(new Error(`e2e setup: ${why}.\nstdout: ${stdout}\nstderr: ${stderr}`));
    };
    server.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /https?:\/\/\S+token=\S+/.exec(stdout);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[0]);
      }
    });
    server.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    server.once('exit', (code) => fail(`kvscope serve exited with code ${code}`));
  });
}
