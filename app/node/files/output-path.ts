import { accessSync, constants, statSync } from 'node:fs';
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
