import { expect, type Locator, type Page, type TestInfo } from '@playwright/test';
import { HistoryView } from './history-view.js';
import { LiveView } from './live-view.js';
import { FolderBrowser, ModelPanel } from './model-panel.js';
import { RunPanel } from './run-panel.js';

/** The whole window, split into its areas' page objects. */
export class Workbench {
  readonly model: ModelPanel;
  readonly run: RunPanel;
  readonly live: LiveView;
  readonly history: HistoryView;
  readonly folders: FolderBrowser;

  /**
   * @param host which front end the page is
   * @param dataDir the folder the host saves runs in (`runs/<id>.json`), when the test knows it
   */
  constructor(readonly page: Page, private readonly testInfo: TestInfo, readonly host: 'browser' | 'electron', readonly dataDir: string | null) {
    this.model = new ModelPanel(page);
    this.run = new RunPanel(page);
    this.live = new LiveView(page);
    this.history = new HistoryView(page);
    this.folders = new FolderBrowser(page);
  }

  /** Waits for the window to show the environment's default model. */
  async ready(): Promise<void> {
    await expect(this.page.getByTestId('app')).toBeVisible();
    await expect(this.model.name).not.toBeEmpty({ timeout: 60_000 });
    await expect(this.page.getByTestId('environment')).not.toHaveText('Connecting…');
  }

  get runStatus(): Locator {
    return this.page.getByTestId('run-status');
  }

  get runButton(): Locator {
    return this.page.getByTestId('run-button');
  }

  get stopButton(): Locator {
    return this.page.getByTestId('stop-button');
  }

  /** The header's "Run disabled: why?" (only while the run check refuses). */
  get headerBlocked(): Locator {
    return this.page.getByTestId('header-blocked');
  }

  notices(tone?: 'error' | 'info' | 'success'): Locator {
    const all = this.page.getByTestId('notice');
    return tone === undefined ? all : all.and(this.page.locator(`[data-tone="${tone}"]`));
  }

  /** A full-window screenshot kept with the test's results (test-results/). */
  async screenshot(name: string): Promise<void> {
    const path = this.testInfo.outputPath(`${name}.png`);
    await this.page.screenshot({ path });
    await this.testInfo.attach(name, { path, contentType: 'image/png' });
  }

  /**
   * The window made as tall as the results panel's content, so one screenshot shows every chart
   * (browser pages only; an Electron window keeps its size and shows what fits).
   */
  async screenshotResults(name: string): Promise<void> {
    const size = this.page.viewportSize();
    const contentHeight = await this.page.locator('.tab-panel').evaluate((panel) => panel.scrollHeight);
    if (size !== null) await this.page.setViewportSize({ width: size.width, height: Math.min(6000, contentHeight + 140) });
    await this.page.waitForTimeout(400); // charts resize on the next frames
    await this.screenshot(name);
    if (size !== null) await this.page.setViewportSize(size);
  }
}
