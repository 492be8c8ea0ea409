import { _electron, test as base, type ElectronApplication, type Page } from '@playwright/test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataDir as serveDataDir, electronBinary, FAKE_URL, PROJECT_ROOT, serveUrl } from './environment.js';
import { Workbench } from './pages/workbench.js';

/** Which engine a test drives: the real one (serve mode or Electron), or the fake test build. */
export type Engine = 'real' | 'fake';

export interface OpenOptions {
  readonly engine?: Engine;
  /** extra query for the fake build: `batch=50&interval=16` (steps per batch, ms between batches) */
  readonly fakeQuery?: string;
  /** a `kvscope serve` the test started itself (its URL with the token), instead of the shared one */
  readonly serveUrl?: string;
}

interface Fixtures {
  /**
   * Opens the workbench window on the chosen engine and waits for its default model. The test fails
   * if the page throws an uncaught error.
   */
  openWorkbench(options?: OpenOptions): Promise<Workbench>;
}

/**
 * One fixture for both projects: `browser` opens a Chromium page on `kvscope serve` (or on the fake
 * build), `electron` launches the built app with `_electron` and uses its first window. The page
 * objects do not know which. Console errors and page errors go to the test log (STYLE.md §14).
 */
export const test = base.extend<Fixtures>({
  openWorkbench: async ({ browser }, use, testInfo) => {
    const pageErrors: string[] = [];
    const electron = testInfo.project.name === 'electron';
    let app: ElectronApplication | null = null;
    let dataDir: string | null = null;
    const pages: Page[] = [];
    await use(async (options = {}) => {
      const engine = options.engine ?? 'real';
      let page: Page;
      if (electron) {
        testInfo.skip(engine === 'fake', 'the fake engine is a browser test build; the Electron project drives the real engine only');
        const binary = electronBinary();
        if ('reason' in binary) {
          console.log(`[electron] skipped: ${binary.reason}`);
          testInfo.skip(true, binary.reason);
          throw new Error('unreachable');
        }
        dataDir = mkdtempSync(join(tmpdir(), 'kvscope-e2e-electron-'));
        app = await _electron.launch({
          executablePath: binary.path,
          args: [join(PROJECT_ROOT, 'out/main/index.js'), '--no-sandbox'],
          env: { ...process.env, KVSCOPE_DATA_DIR: dataDir },
        });
        page = await app.firstWindow();
      } else {
        const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
        page = await context.newPage();
        const url = engine === 'fake' ? `${FAKE_URL}?fake${options.fakeQuery !== undefined ? `&${options.fakeQuery}` : ''}` : options.serveUrl ?? serveUrl();
        if (url === null) throw new Error('KVSCOPE_E2E_SERVE_URL is not set: e2e/global-setup.ts starts `kvscope serve` and sets it.');
        await page.goto(url);
      }
      forwardConsole(page, testInfo.title, pageErrors);
      pages.push(page);
      const workbench = new Workbench(page, testInfo, electron ? 'electron' : 'browser', electron ? dataDir : engine === 'real' && options.serveUrl === undefined ? serveDataDir() : null);
      await workbench.ready();
      return workbench;
    });
    for (const page of pages) if (!electron) await page.context().close();
    if (app !== null) await (app as ElectronApplication).close();
    if (dataDir !== null) rmSync(dataDir, { recursive: true, force: true });
    if (pageErrors.length > 0) throw new Error(`uncaught errors in the page:\n${pageErrors.join('\n')}`);
  },
});

export { expect } from '@playwright/test';

function forwardConsole(page: Page, title: string, pageErrors: string[]): void {
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') console.log(`[page ${message.type()}] ${title}: ${message.text()}`);
  });
  page.on('pageerror', (error) => {
    console.log(`[page error] ${title}: ${error.message}`);
    pageErrors.push(error.message);
  });
  page.on('crash', () => {
    console.log(`[page crash] ${title}`);
    pageErrors.push('the page crashed');
  });
}
