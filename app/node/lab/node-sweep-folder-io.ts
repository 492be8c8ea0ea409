import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIo } from '../../cli/io.js';
import type { SweepFolderIo } from '../../lab/sweep-folder-io.js';
import { writeFileAtomic } from '../atomic-write.js';
import { describeFsError, FileAccessError } from '../fs-errors.js';
import { readGuardedFileSync, readGuardedTextSync } from '../files/guarded-read.js';

/** A sweep folder on this machine's file system (the CLI's and the workbench's sweeps). */
export function nodeSweepFolderIo(): SweepFolderIo {
  return {
    joinPath: (...parts) => join(...parts),
    readTextFile: (path) => readText(path),
    writeFileAtomic,
    exists: (path) => existsSync(path),
    listDirectory: (path) => (existsSync(path) ? readdirSync(path) : []),
    makeDirectory,
    rename: (from, to) => renameSync(from, to),
    remove: (path) => rmSync(path, { recursive: true, force: true }),
    copyDirectory: (from, to) => cpSync(from, to, { recursive: true }),
  };
}

/** What eval's option parser reads (a model folder's existence, a text or layer-map file), on this machine; output goes nowhere. */
export function nodeEvalOptionIo(): CliIo {
  return {
    readFile: (path, kind = 'input') => readGuardedFileSync(path, kind),
    readTextFile: (path, kind = 'input') => readGuardedTextSync(path, kind),
    isDirectory: (path) => {
      try {
        return statSync(path).isDirectory();
      } catch {
        return false;
      }
    },
    joinPath: (...parts) => join(...parts),
    writeFileAtomic,
    stdout: () => undefined,
    stderr: () => undefined,
  };
}

/** Through the guarded reader (app/node/files): a FIFO or a device named as a text or a record is refused, not read. */
function readText(path: string): string {
  return readGuardedTextSync(path, 'input');
}

/** mkdir's EEXIST/ENOTDIR/EROFS/EACCES as a sentence naming the folder: a user's path, never a bug. */
function makeDirectory(path: string): void {
  try {
    mkdirSync(path, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const advice = code === 'EACCES' || code === 'EPERM' ? ' Choose a writable folder.' : '';
    throw new FileAccessError(describeFsError(error, path, 'create') + advice);
  }
}
