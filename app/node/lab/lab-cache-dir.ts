import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseByteSize } from '../../cli/byte-size.js';
import { EvalInputError } from '../../lab/lab-errors.js';

/** kvscope's cache folder: `$KVSCOPE_CACHE_DIR`, else `~/.cache/kvscope` (references, in-graph rewrites, synthetic models). */
export function kvscopeCacheRoot(): string {
  const root = process.env['KVSCOPE_CACHE_DIR'];
  return root !== undefined && root !== '' ? root : join(homedir(), '.cache', 'kvscope');
}

/** Where the lab's cached references live: `<kvscopeCacheRoot()>/eval-references`. */
export function referenceCacheDir(): string {
  return join(kvscopeCacheRoot(), 'eval-references');
}

/** The eval references' size cap: 20 GiB, or `KVSCOPE_CACHE_MAX_BYTES` (bytes, or with a unit: `10G`, `500M`). */
export const DEFAULT_CACHE_MAX_BYTES = 20 * 1024 ** 3;

export function cacheMaxBytes(): number {
  const value = process.env['KVSCOPE_CACHE_MAX_BYTES'];
  if (value === undefined || value === '') return DEFAULT_CACHE_MAX_BYTES;
  const bytes = parseByteSize(value);
  if (bytes === null) {
    throw new EvalInputError(`KVSCOPE_CACHE_MAX_BYTES=${JSON.stringify(value.slice(0, 40))} is not a size: set it to bytes or a number with K, M, G or T `
      + '(binary units, e.g. KVSCOPE_CACHE_MAX_BYTES=10G), or unset it for the default 20 GiB.');
  }
  return bytes;
}

