import { existsSync, lstatSync, readdirSync, rmSync, type Dirent } from 'node:fs';
import { entryFolders } from '../files/entry-folders.js';
import { basename, join } from 'node:path';
import type { CacheEntry, CacheFolder } from '../../cli/cache-command.js';
import { DERIVED_GRAPHS_FOLDER, DERIVED_GRAPHS_MAX_BYTES, listDerivedGraphs, removeDerivedGraph } from '../onnx/derived-graph-cache.js';
import { kvscopeCacheRoot } from './lab-cache-dir.js';
import { listReferenceEntries, removeEntry, type ReferenceEntryInfo } from './reference-entries.js';

/**
 * The folders an older kvscope kept derived graphs in, before the one derived-graph cache
 * (app/node/onnx/derived-graph-cache.ts): nothing reads them now; each is listed as one stale entry
 * and removed whole by any `kvscope cache prune`.
 */
const STALE_FOLDERS: Readonly<Record<string, string>> = {
  'in-graph': 'in-graph rewrites and logits-rows graphs',
  'reference-graphs': 'compact-reference graphs',
};

/**
 * kvscope's cache folders as `kvscope cache list` shows them: the eval references and the derived
 * graphs (managed: LRU cap, prune), the synthetic models (listed only: their format is
 * app/node/synthetic/'s), and an older kvscope's folders where they are still there (stale).
 */
export function listCacheFolders(root = kvscopeCacheRoot()): CacheFolder[] {
  const references = join(root, 'eval-references');
  const derived = join(root, DERIVED_GRAPHS_FOLDER);
  return [
    { name: 'eval-references', path: references, managed: true, entries: listReferenceEntries(references).map(referenceEntry) },
    {
      name: DERIVED_GRAPHS_FOLDER, path: derived, managed: true, maxBytes: DERIVED_GRAPHS_MAX_BYTES,
      entries: listDerivedGraphs(derived).map((entry) => ({ ...entry, linkedBytes: 0 })),
    },
    { name: 'models', path: join(root, 'models'), managed: false, entries: folderEntries(join(root, 'models'), 'synthetic model') },
    ...Object.entries(STALE_FOLDERS).flatMap(([name, what]) => staleFolder(root, name, what)),
  ];
}

/** Removes one entry of a managed folder of `root` (`kvscope cache prune`); an unknown name removes nothing. */
export function removeCacheEntry(root: string, folder: string, name: string): void {
  if (folder === 'eval-references') {
    const entry = listReferenceEntries(join(root, folder)).find((candidate) => candidate.key === name);
    if (entry !== undefined) removeEntry(entry);
  } else if (folder === DERIVED_GRAPHS_FOLDER) {
    removeDerivedGraph(join(root, folder), name);
  } else if (folder in STALE_FOLDERS && name === folder) {
    rmSync(join(root, folder), { recursive: true, force: true });
  }
}

function staleFolder(root: string, name: string, what: string): CacheFolder[] {
  const path = join(root, name);
  if (!existsSync(path)) return [];
  const inside = folderEntries(path, what);
  const size = walk(path);
  return [{
    name, path, managed: true, stale: true,
    entries: [{ name, what: `${what} of an older kvscope (${inside.length} entr${inside.length === 1 ? 'y' : 'ies'}), no longer read`, ...size }],
  }];
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
  return entryFolders(dir).map((name) => ({ name, what: kind, ...walk(join(dir, name)) }));
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
