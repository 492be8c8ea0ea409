import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { UsageError, type CliIo } from '../../app/cli/io.js';

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

/**
 * Temp file in the same folder, fsync, then rename over the target: rename is atomic on one file
 * system, so a crash leaves either the old file or the whole new one, never a half-written file.
 */
export function writeFileAtomic(path: string, bytes: Uint8Array): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fd = openSync(temp, 'w');
    try {
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new UsageError(describeFsError(error, path, 'write'));
  }
}

function describeFsError(error: unknown, path: string, verb: 'read' | 'write'): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT': return verb === 'read' ? `${path} does not exist. Check the path.` : `Cannot write ${path}: its folder does not exist. Create it first.`;
    case 'EISDIR': return `${path} is a folder, not a file.`;
    case 'EACCES':
    case 'EPERM': return `Permission denied: cannot ${verb} ${path}.`;
    case 'ENOSPC': return `Cannot write ${path}: the disk is full.`;
    default: return `Cannot ${verb} ${path}: ${(error as Error | undefined)?.message ?? String(error)}`;
  }
}
