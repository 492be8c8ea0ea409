import type { Download, Locator, Page } from '@playwright/test';

/** The run panel's per-layer plan (inside the kvscope extensions group: open that first). */
export class LayerMapEditor {
  readonly root: Locator;
  constructor(private readonly page: Page) {
    this.root = page.getByTestId('layer-map-editor');
  }

  row(layer: number): Locator {
    return this.root.locator(`[data-testid="layer-row"][data-layer="${layer}"]`);
  }

  /** One side of one layer: `default`, `full`, `bits:4` or `format:llama.cpp:q8_0`. */
  async setSide(layer: number, side: 'key' | 'value', value: string): Promise<void> {
    await this.row(layer).getByTestId(`layer-side-${side}`).selectOption(value);
  }

  /** A range edit: `0-3` or `all`, each side `keep`, `default`, `full`, `bits:N` or `format:NAME`. */
  async setRange(range: string, key: string, value: string): Promise<void> {
    await this.root.getByTestId('layer-range-input').fill(range);
    await this.root.getByTestId('layer-range-key').selectOption(key);
    await this.root.getByTestId('layer-range-value').selectOption(value);
    await this.root.getByTestId('layer-range-apply').click();
  }

  refusal(layer: number): Locator {
    return this.row(layer).getByTestId('layer-row-refusal');
  }

  get summary(): Locator {
    return this.root.getByTestId('layer-map-summary');
  }

  async save(): Promise<Download> {
    const download = this.page.waitForEvent('download');
    await this.root.getByTestId('layer-map-save').click();
    return download;
  }
}
