import { homedir } from 'node:os';
import { join } from 'node:path';
import { SYNTHETIC_FORMAT_VERSION, type SyntheticModelKind } from '../../synthetic/synthetic-spec.js';

/**
 * Where synthetic model folders live: `$KVSCOPE_CACHE_DIR/models`, else `~/.cache/kvscope/models`.
 * KVSCOPE_CACHE_DIR names kvscope's whole cache, so other caches can sit beside `models/`.
 */
export function defaultSyntheticCacheDir(): string {
  const root = process.env['KVSCOPE_CACHE_DIR'];
  return join(root !== undefined && root !== '' ? root : join(homedir(), '.cache', 'kvscope'), 'models');
}

/** `<cacheDir>/<kind>-v<format version>`: a new format version gets a new folder, never a rewrite. */
export function syntheticModelFolder(kind: SyntheticModelKind, cacheDir: string = defaultSyntheticCacheDir()): string {
  return join(cacheDir, `${kind}-v${SYNTHETIC_FORMAT_VERSION}`);
}
