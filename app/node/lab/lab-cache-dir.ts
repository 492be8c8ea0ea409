import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where the lab's cached references live: `$KVSCOPE_CACHE_DIR/eval-references`, else `~/.cache/kvscope/eval-references`. */
export function referenceCacheDir(): string {
  const root = process.env['KVSCOPE_CACHE_DIR'];
  return join(root !== undefined && root !== '' ? root : join(homedir(), '.cache', 'kvscope'), 'eval-references');
}
