import { expect, type Download, type Locator, type Page } from '@playwright/test';

export type StatKey = 'steps' | 'kv' | 'ratio' | 'ratio-fp16' | 'fed' | 'working' | 'rss' | 'flushes' | 'speed' | 'kl' | 'top1';

/** The live run: status, error, headline figures, charts, text, result and its exports. */
export class LiveView {
  readonly root: Locator;
  constructor(private readonly page: Page) {
    this.root = page.getByTestId('live-view');
  }

  get status(): Locator {
    return this.root.getByTestId('live-status');
  }

  /** Waits until the run ended (done, cancelled, refused or failed) and returns the status text. */
  async waitForEnd(timeout = 120_000): Promise<string> {
    await expect(this.status).toHaveText(/^(Done|Cancelled|Refused|Failed)$/, { timeout });
    return (await this.status.textContent()) ?? '';
  }

  async waitForSteps(minimum: number, timeout = 60_000): Promise<void> {
    await expect.poll(async () => Number(await this.stat('steps').textContent()), { timeout }).toBeGreaterThanOrEqual(minimum);
  }

  stat(key: StatKey): Locator {
    return this.root.getByTestId(`stat-${key}`);
  }

  statDetail(key: StatKey): Locator {
    return this.root.getByTestId(`stat-${key}-detail`);
  }

  /** What a chart's legend or colour scale says in words (data-legend, also its aria-description). */
  async chartLegend(id: string): Promise<string> {
    const chart = this.root.getByTestId(`chart-${id}`);
    await chart.scrollIntoViewIfNeeded();
    return (await chart.getAttribute('data-legend')) ?? '';
  }

  async setChartScale(id: string, scale: 'linear' | 'log'): Promise<void> {
    // the radio itself is hidden inside its segmented label, as the user sees it
    await this.root.getByTestId(`scale-${id}`).locator('label', { has: this.page.getByTestId(`scale-${id}-${scale}`) }).click();
    await expect(this.root.getByTestId(`scale-${id}-${scale}`)).toBeChecked();
  }

  /** Tokens of the generated text marked as differing from the reference lane. */
  get divergenceMarks(): Locator {
    return this.text.locator('span.disagree');
  }

  /**
   * Points the chart drew in its last update (data-points on the chart element), scrolled into view
   * first as a user would: charts out of view skip their redraws and catch up when they come back.
   */
  async chartPoints(id: string): Promise<number> {
    const chart = this.root.getByTestId(`chart-${id}`);
    await chart.scrollIntoViewIfNeeded();
    return Number(await chart.getAttribute('data-points'));
  }

  chart(id: string): Locator {
    return this.root.getByTestId(`chart-panel-${id}`);
  }

  get error(): Locator {
    return this.root.getByTestId('run-error');
  }

  errorPart(part: 'code' | 'message' | 'fix'): Locator {
    return this.root.getByTestId(`run-error-details-${part}`);
  }

  get text(): Locator {
    return this.root.getByTestId('generated-text');
  }

  get resultFlushes(): Locator {
    return this.root.getByTestId('result-flushes');
  }

  get savedRunId(): Locator {
    return this.root.getByTestId('result-run-id');
  }

  async exportRun(format: 'json' | 'csv'): Promise<Download> {
    const download = this.page.waitForEvent('download');
    await this.root.getByTestId(`export-${format}`).click();
    return download;
  }

  async exportChartPng(id: string): Promise<Download> {
    const download = this.page.waitForEvent('download');
    await this.root.getByTestId(`export-png-${id}`).click();
    return download;
  }
}
