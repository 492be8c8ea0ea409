import type { CacheCommandRuntime } from '../../app/cli/cache-command.js';
import { listCacheFolders, removeCacheEntry } from '../../app/node/lab/cache-folders.js';
import { cacheMaxBytes, kvscopeCacheRoot } from '../../app/node/lab/lab-cache-dir.js';

/** `kvscope cache` on this machine: the folders under KVSCOPE_CACHE_DIR (or ~/.cache/kvscope). */
export function nodeCacheRuntime(): CacheCommandRuntime {
  const root = kvscopeCacheRoot();
  return {
    root,
    maxBytes: cacheMaxBytes(),
    list: () => listCacheFolders(root),
    remove: (folder, name) => removeCacheEntry(root, folder, name),
    now: () => Date.now(),
  };
}
