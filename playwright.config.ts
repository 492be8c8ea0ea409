import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH, FAKE_PORT } from './e2e/environment.js';

/**
 * End-to-end tests, two projects over the same page objects (e2e/pages):
 * - `browser`: Debian Chromium against `kvscope serve` (real engine; global-setup.ts builds and
 *   starts it), plus the fake-engine test build (`vite build --mode fake`, served by `vite preview`)
 *   for what the real engine cannot produce on demand: a crashing worker, 10,000 steps × 32 layers.
 * - `electron`: the built desktop app through `_electron.launch`; skips, printing why, where there is
 *   no Electron binary (ELECTRON_OVERRIDE_DIST_PATH or node_modules/electron/path.txt).
 * Screenshots and traces of every test stay in test-results/.
 */
export default defineConfig({
  testDir: './e2e',
  outputDir: './test-results',
  workers: 1,
  timeout: 120_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  globalSetup: './e2e/global-setup.ts',
  webServer: {
    command: `npx vite build --config renderer/vite.config.ts --mode fake --logLevel warn && npx vite preview --config renderer/vite.config.ts --mode fake --host 127.0.0.1 --port ${FAKE_PORT} --strictPort`,
    url: `http://127.0.0.1:${FAKE_PORT}/`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
  use: {
    headless: true,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
  },
  projects: [
    { name: 'browser', use: { browserName: 'chromium' } },
    { name: 'electron' },
  ],
});
