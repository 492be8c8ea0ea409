import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { FileAccessError } from '../fs-errors.js';

/** An output path that cannot be written: said before the work that would fill it. */
export class OutputPathError extends FileAccessError {
  override readonly name = 'OutputPathError';
}

/**
 * An output must be writable before the work that produces it starts (a generation can take
 * minutes): its folder exists and is a writable folder, and the path itself is not a folder.
 */
export function checkOutputPath(path: string, flag: string): void {
  const folder = dirname(resolve(path));
  const folderStats = statSync(folder, { throwIfNoEntry: false });
  if (folderStats === undefined) throw new OutputPathError(`${flag} ${path}: the folder ${folder} does not exist. Create it first.`);
  if (!folderStats.isDirectory()) throw new OutputPathError(`${flag} ${path}: ${folder} is not a folder.`);
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory() === true) {
    throw new OutputPathError(`${flag} ${path} is a folder; give a file name, e.g. ${join(path, flag === '--out' ? 'run.json' : 'out.npy')}.`);
  }
  try {
    accessSync(folder, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EROFS' ? 'it is on a read-only file system' : 'this user may not write there';
    throw new OutputPathError(`${flag} ${path}: cannot write into ${folder} (${why}). Choose a writable folder.`);
  }
}

/**
 * An output folder (`sweep --out DIR`) must be a folder this user can write, or a path where one can
 * be made, before any point runs: a file in its place, a file among its parents, a read-only mount
 * or a folder without write permission is the user's to fix, said in those words (mkdir's own
 * EEXIST/ENOTDIR/EROFS/EACCES would read like a bug in kvscope).
 */
export function checkOutputDirectory(path: string, flag: string): void {
  const target = resolve(path);
  let existing = target;
  for (;;) {
    const stats = statOrUndefined(existing);
    if (stats !== undefined) {
      if (!stats.isDirectory()) {
        throw new OutputPathError(existing === target
          ? `${flag} ${path} is a file, not a folder: a sweep writes a folder of records there. Give a new or existing folder, e.g. ${path}.sweep.`
          : `${flag} ${path}: ${existing} is a file, so no folder can be made under it. Give a folder path whose parents are folders.`);
      }
      break;
    }
    const parent = dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  try {
    accessSync(existing, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EROFS' ? 'it is on a read-only file system' : 'this user may not write there';
    throw new OutputPathError(`${flag} ${path}: cannot write into ${existing} (${why}). Choose a writable folder.`);
  }
}

// statSync follows links: a link to a folder is a folder; a dangling link or a loop is "not there" and its parent decides.
function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
