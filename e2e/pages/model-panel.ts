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

/** Open… in the browser: the host's folders (serve mode has no native dialog). */
export class FolderBrowser {
  readonly root: Locator;
  constructor(private readonly page: Page) {
    this.root = page.getByTestId('folder-browser');
  }

  async open(): Promise<void> {
    await this.page.getByTestId('open-model-button').click();
    await expect(this.root).toBeVisible();
    await expect(this.path).not.toHaveText('…');
  }

  get path(): Locator {
    return this.root.getByTestId('folder-path');
  }

  entry(name: string): Locator {
    return this.root.locator(`[data-testid="folder-entry"][data-name="${name}"]`);
  }

  async place(label: string): Promise<void> {
    await this.root.getByTestId('folder-place').filter({ hasText: label }).first().click();
  }

  /** Walks down from the folder on screen into `names`, one folder at a time, as a user clicks. */
  async enter(...names: string[]): Promise<void> {
    for (const name of names) {
      const before = await this.path.textContent();
      await this.entry(name).getByRole('button', { name: `${name}/` }).click();
      await expect(this.path).not.toHaveText(before ?? '');
    }
  }

  async openEntry(name: string): Promise<void> {
    await this.entry(name).getByTestId('folder-entry-open').click();
    await expect(this.root).toHaveCount(0);
  }
}
