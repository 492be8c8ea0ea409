import { lstatSync, mkdirSync, readdirSync, rmSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { parseRunRecord } from '../record/parse-run-record.js';
import { RUN_ID_PATTERN, serializeRunRecord, type RunRecord } from '../record/run-record.js';
import { ATOMIC_TEMP_PATTERN, writeFileAtomic } from './atomic-write.js';
import { readGuardedFile, readGuardedText, readGuardedTextSync } from './files/guarded-read.js';
import { describeFsError, FileAccessError } from './fs-errors.js';

/**
 * One saved record as the folder lists it; `load(id)` reads and checks the record itself. `id` is
 * the file name without `.json`: the record's address, whatever id the record holds inside.
 */
export interface RunStoreEntry {
  readonly id: string;
  readonly path: string;
  /** the entry's own size (a link's, not its target's: a link is never followed) */
  readonly bytes: number;
  readonly modifiedMs: number;
  /** a symbolic link or not a regular file: listed (so that it can be deleted), never read */
  readonly notARegularFile?: true;
}

export interface RunStoreOptions {
  /** a temp file older than this is a crashed write and is removed by `list()` (default one minute) */
  readonly staleTempMs?: number;
  readonly now?: () => number;
}

/**
 * Run records in one folder, one `<id>.json` each. Writes are atomic (atomic-write.ts), so a
 * reader, or a crash, sees a whole record or none; the temp file of a crashed write is skipped by
 * `list()` and removed once it is clearly abandoned. Synchronous, like the atomic write it rests on:
 * records are small and a save happens once per run.
 */
export class RunStore {
  constructor(readonly folder: string, private readonly options: RunStoreOptions = {}) {}

  /** Writes the record as `<record.id>.json`, replacing a record with the same id; returns its path. */
  save(record: RunRecord): string {
    const path = this.pathOf(record.id);
    mkdirSync(this.folder, { recursive: true });
    writeFileAtomic(path, new TextEncoder().encode(serializeRunRecord(record)));
    return path;
  }

  /** Saved records, newest first. An absent folder is an empty store. */
  list(): RunStoreEntry[] {
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new FileAccessError(describeFsError(error, this.folder, 'read'));
    }
    const entries: RunStoreEntry[] = [];
    for (const name of names) {
      if (ATOMIC_TEMP_PATTERN.test(name)) {
        this.removeIfStale(join(this.folder, name));
        continue;
      }
      const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : undefined;
      if (id === undefined || !RUN_ID_PATTERN.test(id)) continue;
      const path = join(this.folder, name);
      // lstat: a link is listed as what it is (a damaged entry the user can delete), never followed.
      const stats = lstatOrUndefined(path);
      if (stats === undefined) continue;
      entries.push({ id, path, bytes: stats.size, modifiedMs: stats.mtimeMs, ...(stats.isFile() ? {} : { notARegularFile: true as const }) });
    }
    return entries.sort((a, b) => b.modifiedMs - a.modifiedMs || b.id.localeCompare(a.id));
  }

  /**
   * Reads and checks one record; a missing, cut or edited file throws with a message that says so.
   * Only a regular file within the run record's cap is read (app/node/files): a link in runs/ points
   * at someone else's file, which is refused unread, so no error can echo its content.
   */
  load(id: string): RunRecord {
    const path = this.pathOf(id);
    return addressed(parseRunRecord(readGuardedTextSync(path, 'run-record'), path), id);
  }

  /** The same without blocking the thread (hosts: a big record must not hold up other requests). */
  async read(id: string): Promise<RunRecord> {
    const path = this.pathOf(id);
    return addressed(parseRunRecord(await readGuardedText(path, 'run-record'), path), id);
  }

  /**
   * The file's bytes as they are, for exporting a damaged record so that it can be mended or sent
   * along with a report. The guarded reader's rules hold: a link or a file past the cap is refused
   * unread, so what leaves is only ever a file kvscope's runs folder holds itself.
   */
  async readRaw(id: string): Promise<Buffer> {
    return readGuardedFile(this.pathOf(id), 'run-record');
  }

  delete(id: string): void {
    const path = this.pathOf(id);
    try {
      rmSync(path);
    } catch (error) {
      throw new FileAccessError(describeFsError(error, path, 'delete'));
    }
  }

  /** The file of a record; the id is checked so that it cannot name a path outside the folder. */
  pathOf(id: string): string {
    if (!RUN_ID_PATTERN.test(id)) {
      throw new FileAccessError(`${JSON.stringify(id)} is not a run id: ids are letters, digits, ".", "_" and "-" (the file name without .json).`);
    }
    return join(this.folder, `${id}.json`);
  }

  /**
   * A temp file is either a write in progress (in this or another kvscope process) or one a crash
   * abandoned. Only age tells them apart without locks: no record takes a minute to write.
   */
  private removeIfStale(path: string): void {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined) return;
    const now = this.options.now?.() ?? Date.now();
    if (now - stats.mtimeMs > (this.options.staleTempMs ?? 60_000)) rmSync(path, { force: true });
  }
}

/**
 * A record as the store addresses it: by its file name. A record copied or renamed by hand keeps
 * its old inner id; listing it under one id and opening or deleting it under another made a ghost.
 */
function addressed(record: RunRecord, id: string): RunRecord {
  return record.id === id ? record : { ...record, id };
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
