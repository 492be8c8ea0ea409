import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError, type CliIo } from '../../app/cli/io.js';
import { writeFileAtomic } from '../../app/node/atomic-write.js';
import { describeFsError } from '../../app/node/fs-errors.js';

/** The CLI's window on the file system and terminal. */
export function nodeCliIo(): CliIo {
  return {
    readFile: readFileFriendly,
    readTextFile: (path) => Buffer.from(readFileFriendly(path)).toString('utf8'),
    isDirectory(path) {
      try {
        return statSync(path).isDirectory();
      } catch {
        return false;
      }
    },
    isFile(path) {
      try {
        return statSync(path).isFile();
      } catch {
        return false;
      }
    },
    joinPath: (...parts) => join(...parts),
    writeFileAtomic,
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
  };
}

function readFileFriendly(path: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new UsageError(describeFsError(error, path, 'read'));
  }
}
