import { expect, type Locator, type Page } from '@playwright/test';

/** The run history and the comparison of two saved runs. */
export class HistoryView {
  readonly root: Locator;
  constructor(private readonly page: Page) {
    this.root = page.getByTestId('history-view');
  }

  async show(): Promise<void> {
    await this.page.getByTestId('tab-history').click();
    await expect(this.root).toBeVisible();
  }

  get rows(): Locator {
    return this.root.getByTestId('history-row');
  }

  row(runId: string): Locator {
    return this.root.locator(`[data-testid="history-row"][data-run-id="${runId}"]`);
  }

  async open(runId: string): Promise<Locator> {
    await this.row(runId).getByTestId('history-open').click();
    const view = this.page.getByTestId('saved-view');
    await expect(view).toHaveAttribute('data-run-id', runId);
    return view;
  }

  async compare(a: string, b: string): Promise<Locator> {
    await this.row(a).getByTestId('history-compare-toggle').check();
    await this.row(b).getByTestId('history-compare-toggle').check();
    await this.root.getByTestId('compare-button').click();
    const view = this.page.getByTestId('compare-view');
    await expect(view).toBeVisible();
    return view;
  }

  /** A damaged file of the runs folder (issue 24): listed by file name with the reason, never opened. */
  damagedRow(fileId: string): Locator {
    return this.root.locator(`[data-testid="history-damaged-row"][data-run-id="${fileId}"]`);
  }

  async deleteDamaged(fileId: string): Promise<void> {
    await this.damagedRow(fileId).getByTestId('history-damaged-delete').click();
    await this.damagedRow(fileId).getByTestId('history-damaged-delete-confirm').click();
    await expect(this.damagedRow(fileId)).toHaveCount(0);
  }

  async delete(runId: string): Promise<void> {
    await this.row(runId).getByTestId('history-delete').click();
    await this.row(runId).getByTestId('history-delete-confirm').click();
    await expect(this.row(runId)).toHaveCount(0);
  }
}
