import { readdirSync, readFileSync, rmSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';

/** What a stored reference is of, for people (`kvscope cache list`); the key alone decides what it is used for. */
export interface ReferenceDescription {
  /** the model folder and graph file as the evaluation that wrote it named them */
  readonly model: { readonly folder: string; readonly onnxFile: string };
  readonly text: { readonly name: string; readonly sha256: string };
  readonly windows: { readonly context: number; readonly stride: number; readonly prefill: number };
  readonly feed: string;
  readonly executionProvider: string;
}

/** One entry of the reference folder as found on disk. */
export interface ReferenceEntryInfo {
  /** the folder (or, for a format-1 file, the file) name: the content key */
  readonly key: string;
  readonly path: string;
  /** null: a format-1 single file (from before window-by-window references), or a description that cannot be read */
  readonly description: ReferenceDescription | null;
  /** windows stored (format 2) */
  readonly windows: number;
  readonly bytes: number;
  /** last use: the entry's description file's modification time (touched by every evaluation that opens it) */
  readonly lastUsedMs: number;
}

const WINDOW_FILE = /^w\d+\.bin$/;

/** Every entry in `dir` (none when it does not exist). Temp files of writes in progress are counted in their entry's size. */
export function listReferenceEntries(dir: string): ReferenceEntryInfo[] {
  let names: Dirent[];
  try {
    names = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const entries: ReferenceEntryInfo[] = [];
  for (const dirent of names) {
    const path = join(dir, dirent.name);
    try {
      if (dirent.isFile() && dirent.name.endsWith('.ref')) {
        const stat = statSync(path);
        entries.push({ key: dirent.name.slice(0, -'.ref'.length), path, description: null, windows: 0, bytes: stat.size, lastUsedMs: stat.mtimeMs });
      } else if (dirent.isDirectory() && !dirent.name.endsWith('.lock')) {
        // `<key>.lock` is the lock of a reference being computed (reference-lock.ts), not an entry: never pruned
        entries.push(folderEntry(dirent.name, path));
      }
    } catch {
      // removed while listing (another process evicted it): not an entry any more
    }
  }
  return entries;
}

function folderEntry(key: string, path: string): ReferenceEntryInfo {
  let bytes = 0;
  let windows = 0;
  let usedMs: number | null = null;
  let newestMs = 0;
  for (const name of readdirSync(path)) {
    const stat = statSync(join(path, name));
    bytes += stat.size;
    if (WINDOW_FILE.test(name)) windows++;
    if (name === 'reference.json') usedMs = stat.mtimeMs;
    newestMs = Math.max(newestMs, stat.mtimeMs);
  }
  // Without its description (a first window still being written), the newest file stands for the last use.
  return { key, path, description: readDescription(join(path, 'reference.json')), windows, bytes, lastUsedMs: usedMs ?? newestMs };
}

function readDescription(path: string): ReferenceDescription | null {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<ReferenceDescription> & { format?: unknown };
    if (value.format !== 'kvscope-eval-reference' || typeof value.model?.folder !== 'string' || typeof value.text?.name !== 'string') return null;
    return value as ReferenceDescription;
  } catch {
    return null;
  }
}

/** Deletes one entry (folder or format-1 file). */
export function removeEntry(entry: Pick<ReferenceEntryInfo, 'path'>): void {
  rmSync(entry.path, { recursive: true, force: true });
}
