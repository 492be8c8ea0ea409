import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import { cacheMaxBytes, referenceCacheDir } from './lab-cache-dir.js';
import { listReferenceEntries, removeEntry, type ReferenceDescription } from './reference-entries.js';
import { readWindowFile, writeWindowFile, type StoredWindow, type WindowRead } from './reference-window-file.js';

export type { ReferenceDescription } from './reference-entries.js';

/** The entry's description, and the file whose modification time is its last use. */
export const ENTRY_FILE = 'reference.json';

/**
 * The lab's on-disk references (reference-source.ts), one folder per content key (reference-key.ts):
 * `<dir>/<key>/reference.json` says what it is (model, text, windows; for `kvscope cache list`) and
 * `w<index>.bin` holds one window each (reference-window-file.ts: verified by sha256 as read).
 * The key leaves out how many windows are asked for, so one entry serves any evaluation whose
 * windows it holds (6 stored windows answer a 3-window eval of the same text) and grows when a later
 * evaluation asks for more. Windows are written one by one as they are computed, so neither computing
 * nor reading a reference ever holds more than one window in memory.
 * After each write the folder is kept under its cap (lab-cache-dir.ts cacheMaxBytes) by removing the
 * least recently used entries; the entry being written is never removed.
 */
export class ReferenceStore {
  readonly dir: string;
  readonly #maxBytes: number;

  constructor(dir = referenceCacheDir(), options: { readonly maxBytes?: number } = {}) {
    this.dir = dir;
    this.#maxBytes = options.maxBytes ?? cacheMaxBytes();
  }

  /** The entry of `key` (created on its first write); opening it counts as a use. */
  entry(key: string, description: ReferenceDescription): ReferenceEntry {
    const entry = new ReferenceEntry(join(this.dir, key), key, description, () => this.#enforceCap(key));
    entry.touch();
    return entry;
  }

  /** Removes the least recently used entries (never `keep`) until the folder is within its cap. */
  #enforceCap(keep: string): string[] {
    const entries = listReferenceEntries(this.dir);
    let total = entries.reduce((sum, entry) => sum + entry.bytes, 0);
    const removed: string[] = [];
    for (const entry of [...entries].sort((a, b) => a.lastUsedMs - b.lastUsedMs)) {
      if (total <= this.#maxBytes) break;
      if (entry.key === keep) continue;
      removeEntry(entry);
      total -= entry.bytes;
      removed.push(entry.key);
    }
    return removed;
  }
}

export class ReferenceEntry {
  constructor(
    readonly folder: string,
    readonly key: string,
    readonly description: ReferenceDescription,
    private readonly afterWrite: () => string[],
  ) {}

  windowPath(index: number): string {
    return join(this.folder, `w${index}.bin`);
  }

  /** Whether window `index` is on disk (its content is verified when it is read). */
  has(index: number): boolean {
    return existsSync(this.windowPath(index));
  }

  /** Window `index`, verified; a window that fails its check is removed, so it is computed again. */
  read(index: number, rows: number): WindowRead {
    const read = readWindowFile(this.windowPath(index), this.key, index, rows);
    if (!read.ok && read.reason !== 'missing') rmSync(this.windowPath(index), { force: true });
    return read;
  }

  /** Removes window `index` (it failed a check after it was read). */
  remove(index: number): void {
    rmSync(this.windowPath(index), { force: true });
  }

  /** Stores window `index` (atomically); returns the entries removed to keep the cache under its cap. */
  write(index: number, stored: StoredWindow): string[] {
    mkdirSync(this.folder, { recursive: true });
    if (!existsSync(join(this.folder, ENTRY_FILE))) {
      writeFileAtomic(join(this.folder, ENTRY_FILE), Buffer.from(`${JSON.stringify({ format: 'kvscope-eval-reference', version: 2, key: this.key, ...this.description }, null, 2)}\n`));
    }
    writeWindowFile(this.windowPath(index), this.key, index, stored);
    this.touch();
    return this.afterWrite();
  }

  /** Bytes on disk (every file of the entry). */
  bytes(): number {
    if (!existsSync(this.folder)) return 0;
    let total = 0;
    for (const name of readdirSync(this.folder)) total += statSync(join(this.folder, name)).size;
    return total;
  }

  /** Records a use: the description file's modification time is the entry's last use (LRU eviction, `kvscope cache list`). */
  touch(): void {
    const now = new Date();
    try {
      utimesSync(join(this.folder, ENTRY_FILE), now, now);
    } catch {
      // not written yet (its first window creates it), or removed meanwhile: nothing to record
    }
  }
}
