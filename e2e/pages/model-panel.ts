import { expect, type Locator, type Page } from '@playwright/test';

/** The model panel: sources, architecture, layer strip, transformers' verdict and its three choices. */
export class ModelPanel {
  readonly root: Locator;
  constructor(page: Page) {
    this.root = page.getByTestId('model-panel');
  }

  async openSynthetic(kind: 'synthetic' | 'synthetic-hybrid'): Promise<void> {
    await this.root.getByTestId(`open-${kind}`).click();
    await expect(this.name).toHaveText(kind);
  }

  /** Types a folder path into the path field and opens it (both hosts show the field). */
  async openFolder(path: string): Promise<void> {
    await this.root.getByTestId('model-path-input').fill(path);
    await this.root.getByTestId('model-path-open').click();
    await expect(this.root.getByTestId('model-loading')).toHaveCount(0, { timeout: 60_000 });
  }

  get name(): Locator {
    return this.root.getByTestId('model-name');
  }

  fact(key: 'layers' | 'heads' | 'kv-heads' | 'head-dim' | 'kv-dtype' | 'model-type' | 'layout' | 'config-file' | 'precision' | 'graph-size'): Locator {
    return this.root.getByTestId(`model-fact-${key}`);
  }

  get layerCells(): Locator {
    return this.root.getByTestId('layer-cell');
  }

  /** `[letter, plan, flagged]` per layer */
  async layers(): Promise<[string, string, boolean][]> {
    return this.layerCells.evaluateAll((cells) => cells.map((cell) => [cell.textContent ?? '', cell.getAttribute('data-plan') ?? '', cell.getAttribute('data-flagged') === 'true'] as [string, string, boolean]));
  }

  get verdict(): Locator {
    return this.root.getByTestId('layer-verdict');
  }

  get verdictQuote(): Locator {
    return this.root.getByTestId('layer-verdict-message-verbatim');
  }

  async chooseHandling(choice: 'refuse' | 'full-attention-only' | 'dynamic'): Promise<void> {
    await this.root.getByTestId(`layer-handling-${choice}`).check();
  }

  get error(): Locator {
    return this.root.getByTestId('model-error');
  }
}
