import type { CacheCommandRuntime } from '../../app/cli/cache-command.js';
import { listCacheFolders } from '../../app/node/lab/cache-folders.js';
import { cacheMaxBytes, kvscopeCacheRoot, referenceCacheDir } from '../../app/node/lab/lab-cache-dir.js';
import { listReferenceEntries, removeEntry } from '../../app/node/lab/reference-entries.js';

/** `kvscope cache` on this machine: the folders under KVSCOPE_CACHE_DIR (or ~/.cache/kvscope). */
export function nodeCacheRuntime(): CacheCommandRuntime {
  const root = kvscopeCacheRoot();
  return {
    root,
    maxBytes: cacheMaxBytes(),
    list: () => listCacheFolders(root),
    remove(name) {
      const entry = listReferenceEntries(referenceCacheDir()).find((candidate) => candidate.key === name);
      if (entry !== undefined) removeEntry(entry);
    },
    now: () => Date.now(),
  };
}
