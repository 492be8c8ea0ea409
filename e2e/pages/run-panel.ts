import { expect, type Locator, type Page } from '@playwright/test';

export interface CacheSettings {
  readonly backend?: 'quanto' | 'hqq';
  readonly nbits?: number;
  readonly axisKey?: number;
  readonly axisValue?: number;
  readonly groupSize?: number;
  readonly residualLength?: number;
  readonly layerPolicy?: 'all' | 'full-attention-only';
}

/** The run panel: cache settings, prompt, sampling, reference lane, and the inline preflight. */
export class RunPanel {
  readonly root: Locator;
  constructor(page: Page) {
    this.root = page.getByTestId('run-panel');
  }

  async setCache(settings: CacheSettings): Promise<void> {
    const { backend, nbits, axisKey, axisValue, groupSize, residualLength, layerPolicy } = settings;
    if (backend !== undefined) await this.root.getByTestId('backend-select').selectOption(backend);
    if (nbits !== undefined) await this.root.getByTestId('nbits-select').selectOption(String(nbits));
    if (axisKey !== undefined) await this.root.getByTestId('axis-key-select').selectOption(String(axisKey));
    if (axisValue !== undefined) await this.root.getByTestId('axis-value-select').selectOption(String(axisValue));
    if (groupSize !== undefined) await this.root.getByTestId('group-size-input').fill(String(groupSize));
    if (residualLength !== undefined) await this.root.getByTestId('residual-length-input').fill(String(residualLength));
    if (layerPolicy !== undefined) await this.root.getByTestId('layer-policy-select').selectOption(layerPolicy);
  }

  async setCacheMode(mode: 'quantized' | 'dynamic'): Promise<void> {
    await this.root.getByTestId(`cache-mode-${mode}`).check({ force: true });
  }


  /** The prompt as token ids (the field a model without a tokenizer shows in place of text). */
  get promptIds(): Locator {
    return this.root.getByTestId('prompt-ids-input');
  }

  get promptIdsProblem(): Locator {
    return this.root.getByTestId('prompt-ids-problem');
  }

  async setPromptIds(ids: string): Promise<void> {
    await this.promptIds.fill(ids);
  }

  async setMaxNewTokens(tokens: number): Promise<void> {
    await this.root.getByTestId('max-new-tokens-input').fill(String(tokens));
  }

  async setDequantize(path: 'default' | 'graph' | 'host'): Promise<void> {
    await this.root.getByTestId('dequantize-select').selectOption(path);
  }

  async setReference(on: boolean): Promise<void> {
    await this.root.getByTestId('reference-toggle').setChecked(on);
  }

  get preflightStatus(): Locator {
    return this.root.getByTestId('preflight-status');
  }

  diagnostic(code: string): Locator {
    return this.root.getByTestId('preflight-diagnostics').locator(`[data-code="${code}"]`);
  }

  async run(): Promise<void> {
    await expect(this.root.getByTestId('run-panel-run')).toBeEnabled();
    await this.root.getByTestId('run-panel-run').click();
  }

  get runButton(): Locator {
    return this.root.getByTestId('run-panel-run');
  }

  /** Why Run is disabled, next to the button. */
  get blockedReason(): Locator {
    return this.root.getByTestId('run-blocked-reason');
  }

  /** The run check's refusal: the library's message (verbatim quote first) and what to do. */
  get refusal(): Locator {
    return this.root.getByTestId('preflight-refusal');
  }

  get refusalQuote(): Locator {
    return this.root.getByTestId('preflight-refusal-message-verbatim');
  }

  /** The real lengths the check used. */
  check(part: 'prompt-tokens' | 'context' | 'flushes' | 'time'): Locator {
    return this.root.getByTestId(part === 'time' ? 'check-time' : `check-${part}`);
  }

  get fixes(): Locator {
    return this.root.getByTestId('run-fix');
  }

  async applyFix(label: string): Promise<void> {
    await this.fixes.filter({ hasText: label }).click();
  }

  async setPrompt(prompt: string): Promise<void> {
    await this.root.getByTestId('prompt-input').fill(prompt);
  }

  executionProvider(name: string): Locator {
    return this.root.getByTestId('ep-select').locator(`option[value="${name}"]`);
  }

  get executionProviderReasons(): Locator {
    return this.root.getByTestId('ep-reasons');
  }
}
