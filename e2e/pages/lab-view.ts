import { expect, type Locator, type Page } from '@playwright/test';

/** The Lab tab: setup, status, Pareto chart, results table, heatmap, comparison, point detail, saved sweeps. */
export class LabView {
  readonly root: Locator;
  constructor(readonly page: Page) {
    this.root = page.getByTestId('lab-view');
  }

  async open(): Promise<void> {
    await this.page.getByTestId('tab-lab').click();
    await expect(this.root).toBeVisible();
  }

  async vary(field: 'backend' | 'nbits' | 'group-size' | 'residual-length' | 'axis-key' | 'axis-value', values: string): Promise<void> {
    await this.root.getByTestId(`lab-vary-${field}`).fill(values);
  }

  async setWindows(context: number, windows: number): Promise<void> {
    await this.root.getByTestId('lab-context').fill(String(context));
    await this.root.getByTestId('lab-windows').fill(String(windows));
  }

  get startButton(): Locator {
    return this.root.getByTestId('lab-start');
  }

  get status(): Locator {
    return this.root.getByTestId('lab-status');
  }

  /** Waits until the shown sweep has finished (every point measured, refused or failed). */
  async waitDone(timeout = 120_000): Promise<void> {
    await expect(this.status).toHaveAttribute('data-status', 'done', { timeout });
  }

  get rows(): Locator {
    return this.root.getByTestId('lab-row');
  }

  get pareto(): Locator {
    return this.root.getByTestId('lab-pareto');
  }

  get heatmap(): Locator {
    return this.root.getByTestId('lab-heatmap');
  }

  get point(): Locator {
    return this.root.getByTestId('lab-point');
  }

  get compareRows(): Locator {
    return this.root.getByTestId('lab-compare-row');
  }

  get historyRows(): Locator {
    return this.root.getByTestId('lab-history-row');
  }

  /** The table's cells by column id (data-column: settings, kld, top1, …), row by row. */
  async tableByColumn(): Promise<Record<string, string>[]> {
    return this.rows.evaluateAll((rows) => rows.map((row) => Object.fromEntries([...row.querySelectorAll('td[data-column]')].map((cell) => [cell.getAttribute('data-column')!, cell.textContent ?? '']))));
  }

  /** The table's cell texts, row by row. */
  async table(): Promise<string[][]> {
    return this.rows.evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent ?? '')));
  }
}
