import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describeFsError, StorageWriteError } from './fs-errors.js';

/** Temp files are `.<target name>.<pid>.<random>.tmp` beside the target; readers of a folder skip them. */
export const ATOMIC_TEMP_PATTERN = /^\..+\.\d+\.[0-9a-f]{8}\.tmp$/;

/**
 * Temp file in the same folder, fsync, then rename over the target: rename is atomic on one file
 * system, so a crash leaves either the old file or the whole new one, never a half-written file.
 * A crash before the rename leaves the temp file behind (see ATOMIC_TEMP_PATTERN).
 */
export function writeFileAtomic(path: string, bytes: Uint8Array | readonly Uint8Array[]): void {
  // Parts are written one after the other, so a large payload behind a small header is never concatenated in memory.
  const parts = bytes instanceof Uint8Array ? [bytes] : bytes;
  const folder = dirname(path);
  const temp = join(folder, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fd = openSync(temp, 'w');
    try {
      for (const part of parts) {
        let offset = 0;
        while (offset < part.length) offset += writeSync(fd, part, offset, part.length - offset);
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new StorageWriteError(describeFsError(error, path, 'write'), (error as NodeJS.ErrnoException).code);
  }
  syncFolder(folder);
}

/** Makes the rename itself durable. Best effort: Windows cannot open a folder for fsync. */
function syncFolder(folder: string): void {
  try {
    const fd = openSync(folder, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // the file is complete either way; only its survival of a power cut is less certain
  }
}
