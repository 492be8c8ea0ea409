import { homedir } from 'node:os';
import { join } from 'node:path';
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
    throw new EvalInputError(`KVSCOPE_CACHE_MAX_BYTES=${JSON.stringify(value.slice(0, 40))} is not a size.`,
      'Set it to bytes or a number with K, M, G or T (binary units), e.g. KVSCOPE_CACHE_MAX_BYTES=10G, or unset it for the default 20G.');
  }
  return bytes;
}

/** `1048576`, `512K`, `10G`, `1.5T` (binary units; an optional `iB`/`B`); null when it is not a size. */
export function parseByteSize(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$/i.exec(text);
  if (match === null) return null;
  const power = ['', 'K', 'M', 'G', 'T'].indexOf(match[2]!.toUpperCase());
  const bytes = Math.floor(Number(match[1]) * 1024 ** power);
  return Number.isSafeInteger(bytes) ? bytes : null;
}
