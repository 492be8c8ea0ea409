import { chmodSync, cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../../cache/cache-config.js';
import type { RunSettings } from '../../engine/types.js';
import { sharedDir } from '../golden.js';

/** ../shared/models/stories260k (read-only; tests copy it to a temp folder before changing anything). */
export function storiesDir(): string {
  return join(sharedDir(), 'models', 'stories260k');
}

/**
 * llama2.c's test_all.py expected output for stories260K, greedy from BOS, 200 steps: the first 200
 * generated tokens must decode to exactly this (the README's quote, untruncated).
 */
export const LLAMA2C_EXPECTED_200 =
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. ' +
  'She wanted to play with it, but it was too high.\nLily\'s mom said, "Lily, let\'s go to the park." Lily was sad and didn\'t know what to do. ' +
  'She said, "I want to play with your ball, but I can\'t find it."\nLily was sad and didn\'t know what to do. ' +
  'She said, "I\'m sorry, Lily. I didn\'t know what to do."\nLily didn\'t want to help her mom, so she';

/** The README's first 16 ids after [1]. */
export const README_FIRST_16 = [403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338];

/** HQQ 8-bit, axis 1, groups of 32 (= 4 heads · 8 dims per token row), residual 32. */
export const HQQ8: QuantizedCacheSettings = {
  ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', nbits: 8, axisKey: 1, axisValue: 1, groupSize: 32, residualLength: 32,
};

export function storiesSettings(overrides: Partial<RunSettings> = {}): RunSettings {
  return {
    model: storiesDir(),
    executionProvider: 'cpu',
    cacheMode: 'dynamic',
    quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
    prompt: '',
    maxNewTokens: 400,
    sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 },
    reference: false,
    ...overrides,
  };
}

/** A writable copy of stories260k in a temp folder; call the returned function to remove it. */
export function copyOfStories(): { readonly dir: string; readonly remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'kvscope-stories-'));
  cpSync(storiesDir(), dir, { recursive: true });
  makeWritable(dir);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The shared files are read-only, and cpSync keeps their modes. */
function makeWritable(path: string): void {
  const isDirectory = statSync(path).isDirectory();
  chmodSync(path, isDirectory ? 0o755 : 0o644);
  if (isDirectory) for (const entry of readdirSync(path)) makeWritable(join(path, entry));
}
