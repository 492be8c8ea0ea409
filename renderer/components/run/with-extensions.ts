import type { QuantizedCacheSettings } from '../../../app/cache/cache-config.js';
import type { CacheExtensions } from '../../../app/cache/cache-extensions.js';

export type MutableExtensions = { -readonly [K in keyof CacheExtensions]: CacheExtensions[K] };

/** The settings with these extensions, dropping knobs set back to off; none left: transformers' settings exactly. */
export function withExtensions(settings: QuantizedCacheSettings, extensions: Partial<MutableExtensions>): QuantizedCacheSettings {
  const kept = Object.fromEntries(Object.entries(extensions).filter(([, value]) => value !== undefined)) as CacheExtensions;
  const { extensions: _previous, ...plain } = settings;
  return Object.keys(kept).length === 0 ? plain : { ...plain, extensions: kept };
}
