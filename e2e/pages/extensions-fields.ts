import type { Locator, Page } from '@playwright/test';

/** The run panel's collapsed "kvscope extensions (beyond transformers)" group. */
export class ExtensionsFields {
  readonly root: Locator;
  constructor(page: Page) {
    this.root = page.getByTestId('extensions-fields');
  }

  async open(): Promise<void> {
    if (await this.root.evaluate((element) => (element as unknown as { open: boolean }).open)) return;
    await this.root.locator('summary').click();
  }

  get active(): Locator {
    return this.root.getByTestId('extensions-active');
  }

  async setBits(side: 'key' | 'value', bits: number | null): Promise<void> {
    await this.root.getByTestId(`nbits-${side}-select`).selectOption(bits === null ? '' : String(bits));
  }

  async setSinkTokens(tokens: number): Promise<void> {
    await this.root.getByTestId('sink-tokens-input').fill(String(tokens));
  }

  /** A runtime KV format for one side (the other side follows until set); null clears both. */
  async setFormat(side: 'key' | 'value', format: string | null): Promise<void> {
    await this.root.getByTestId(`kv-format-${side}-select`).selectOption(format ?? '');
  }

  async setRotation(rotation: 'hadamard' | null): Promise<void> {
    await this.root.getByTestId('rotation-select').selectOption(rotation ?? '');
  }
}
