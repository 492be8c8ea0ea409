import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../../cache/cache-config.js';
import { defaultEvalText, DEFAULT_TEXT_NAME } from '../../../lab/default-text.js';
import { defaultWindowSettings, type EvalSettings } from '../../../lab/eval-settings.js';
import { storiesDir } from '../../test-support/stories.js';
import { ReferenceStore } from '../reference-store.js';

/** stories260k, the default text, 512-token windows (at most `maxWindows`), the dynamic cache unless overridden. */
export function storiesEvalSettings(overrides: Partial<EvalSettings> = {}, maxWindows: number | null = 3): EvalSettings {
  return {
    model: storiesDir(),
    executionProvider: 'cpu',
    cacheMode: 'dynamic',
    quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
    text: { name: DEFAULT_TEXT_NAME, content: defaultEvalText() },
    windows: { ...defaultWindowSettings(), maxWindows },
    ...overrides,
  };
}

/** A reference store in a temp folder of its own; `remove` deletes it. */
export function tempReferenceStore(): { readonly store: ReferenceStore; readonly dir: string; readonly remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'kvscope-references-'));
  return { store: new ReferenceStore(dir), dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
