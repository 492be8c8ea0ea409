import * as dense from './dense-model-configs.js';
import * as hybrid from './hybrid-model-configs.js';
import * as multimodal from './multimodal-model-configs.js';
import type { PublishedConfig } from './published-config.js';

/** Every fixture, for tests that must cover them all. */
export const PUBLISHED_CONFIGS: readonly PublishedConfig[] = [...Object.values(dense), ...Object.values(multimodal), ...Object.values(hybrid)];

/** The fixture's config.json text, as a file on disk would hold it. */
export function configJson(published: PublishedConfig): string {
  return JSON.stringify(published.config, null, 2);
}
