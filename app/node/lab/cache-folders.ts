import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { basename, join } from 'node:path';
import type { CacheEntry, CacheFolder } from '../../cli/cache-command.js';
import { kvscopeCacheRoot } from './lab-cache-dir.js';
import { listReferenceEntries, type ReferenceEntryInfo } from './reference-entries.js';

/**
 * kvscope's cache folders as `kvscope cache list` shows them: the eval references (managed: LRU cap,
 * prune) and, listed only, the in-graph rewrites and the synthetic models, whose formats their own
 * modules own (app/node/onnx/in-graph-model.ts, app/node/synthetic/); each of their entries is a
 * folder, sized by walking it without following links.
 */
export function listCacheFolders(root = kvscopeCacheRoot()): CacheFolder[] {
  const references = join(root, 'eval-references');
  return [
    { name: 'eval-references', path: references, managed: true, entries: listReferenceEntries(references).map(referenceEntry) },
    { name: 'reference-graphs', path: join(root, 'reference-graphs'), managed: false, entries: folderEntries(join(root, 'reference-graphs'), 'compact-reference graphs (hidden-state output, LM head)') },
    { name: 'in-graph', path: join(root, 'in-graph'), managed: false, entries: folderEntries(join(root, 'in-graph'), 'in-graph rewrite') },
    { name: 'models', path: join(root, 'models'), managed: false, entries: folderEntries(join(root, 'models'), 'synthetic model') },
  ];
}

function referenceEntry(entry: ReferenceEntryInfo): CacheEntry {
  const d = entry.description;
  const what = d === null
    ? (entry.path.endsWith('.ref') ? 'reference in the format before window-by-window storage (no longer read; prune removes it)' : 'reference (description unreadable)')
    : `reference of ${basename(d.model.folder)}/${d.model.onnxFile}, text ${d.text.name}, ${entry.windows} window${entry.windows === 1 ? '' : 's'} of ${d.windows.context}` +
      ` (stride ${d.windows.stride}, prefill ${d.windows.prefill}), ${d.feed}, ${d.executionProvider}`;
  return { name: entry.key, what, bytes: entry.bytes, linkedBytes: 0, lastUsedMs: entry.lastUsedMs };
}

function folderEntries(dir: string, kind: string): CacheEntry[] {
  let names: Dirent[];
  try {
    names = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return names.filter((dirent) => dirent.isDirectory() && !dirent.name.startsWith('.')).map((dirent) => {
    const size = walk(join(dir, dirent.name));
    return { name: dirent.name, what: kind, ...size };
  });
}

/** Bytes of the regular files under `path` (links not followed); files with other hard links count as linked. */
function walk(path: string): { bytes: number; linkedBytes: number; lastUsedMs: number } {
  const total = { bytes: 0, linkedBytes: 0, lastUsedMs: 0 };
  const stack = [path];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) {
        stack.push(full);
        continue;
      }
      if (!entry.isFile()) continue;
      try {
        const stat = lstatSync(full);
        if (stat.nlink > 1) total.linkedBytes += stat.size;
        else total.bytes += stat.size;
        total.lastUsedMs = Math.max(total.lastUsedMs, stat.mtimeMs);
      } catch {
        // removed while listing
      }
    }
  }
  return total;
}
