import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIo } from '../../cli/io.js';
import type { SweepFolderIo } from '../../lab/sweep-folder-io.js';
import { writeFileAtomic } from '../atomic-write.js';
import { describeFsError, FileAccessError } from '../fs-errors.js';

/** A sweep folder on this machine's file system (the CLI's and the workbench's sweeps). */
export function nodeSweepFolderIo(): SweepFolderIo {
  return {
    joinPath: (...parts) => join(...parts),
    readTextFile: (path) => readText(path),
    writeFileAtomic,
    exists: (path) => existsSync(path),
    listDirectory: (path) => (existsSync(path) ? readdirSync(path) : []),
    makeDirectory: (path) => void mkdirSync(path, { recursive: true }),
    rename: (from, to) => renameSync(from, to),
    remove: (path) => rmSync(path, { recursive: true, force: true }),
    copyDirectory: (from, to) => cpSync(from, to, { recursive: true }),
  };
}

/** What eval's option parser reads (a model folder's existence, a text or layer-map file), on this machine; output goes nowhere. */
export function nodeEvalOptionIo(): CliIo {
  return {
    readFile: (path) => {
      try {
        return readFileSync(path);
      } catch (error) {
        throw new FileAccessError(describeFsError(error, path, 'read'));
      }
    },
    readTextFile: readText,
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

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new FileAccessError(describeFsError(error, path, 'read'));
  }
}
