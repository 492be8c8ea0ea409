import { statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError, type CliFileKind, type CliIo } from '../../app/cli/io.js';
import { writeFileAtomic } from '../../app/node/atomic-write.js';
import type { FileKind } from '../../app/node/files/file-kinds.js';
import { readFilePrefixSync } from '../../app/node/files/file-prefix.js';
import { readGuardedFileSync } from '../../app/node/files/guarded-read.js';
import { checkOutputDirectory, checkOutputPath } from '../../app/node/files/output-path.js';

/** The CLI's window on the file system and terminal. */
export function nodeCliIo(): CliIo {
  return {
    readFile: readFileFriendly,
    readTextFile: (path, kind) => readFileFriendly(path, kind).toString('utf8'),
    readFilePrefix: (path, maxBytes, kind = 'input') => friendly(() => readFilePrefixSync(path, maxBytes, kind)),
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
    checkOutputPath,
    checkOutputDirectory,
    writeFileAtomic,
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
  };
}

/** Every CLI read goes through the guarded reader: a FIFO or /dev/zero given as an input is refused at once. */
function readFileFriendly(path: string, kind: CliFileKind = 'input'): Buffer {
  const guarded: FileKind = kind;
  return friendly(() => readGuardedFileSync(path, guarded));
}

/** A guarded read's error as the CLI's usage error, its fix appended. */
function friendly<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    const fix = (error as { fix?: unknown }).fix;
    throw new UsageError(`${(error as Error).message}${typeof fix === 'string' && fix !== '' ? ` ${fix}` : ''}`);
  }
}
