import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { lstat, open, stat, type FileHandle } from 'node:fs/promises';
import { formatBytes } from '../../cli/byte-size.js';
import { describeFsError, FileAccessError } from '../fs-errors.js';
import { FILE_RULES, type FileKind, type FileRule } from './file-kinds.js';
import { GuardedFileError } from './file-read-error.js';

/**
 * The one way kvscope reads a file (every kind in file-kinds.ts). Before anything is read:
 * - the path is stat-ed, never opened, when it is not a regular file: opening a FIFO blocks until
 *   a writer comes (forever, in a host serving other requests) and /dev/zero never ends;
 * - it is opened non-blocking and checked again on the descriptor (the path may have been swapped);
 * - at most the kind's cap is read, whatever the size claimed, so a growing file cannot run on.
 * The async forms are for hosts (one request must never block another); the sync forms for the
 * CLI and the generation worker, which serve no one else. Both refuse in microseconds.
 */
export async function readGuardedFile(path: string, kind: FileKind): Promise<Buffer> {
  const rule = FILE_RULES[kind];
  let handle;
  try {
    checkStats(rule.followLinks ? await stat(path) : await lstat(path), path, rule);
    handle = await open(path, openFlags(rule));
    const opened = await handle.stat();
    checkStats(opened, path, rule);
    const chunks = new ChunkedRead(path, rule, opened.size);
    for (let target = chunks.next(); target !== null; target = chunks.next()) {
      chunks.advance((await handle.read(target.buffer, target.offset, target.length, null)).bytesRead);
    }
    return chunks.result();
  } catch (error) {
    throw asReadError(error, path, rule);
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

export async function readGuardedText(path: string, kind: FileKind): Promise<string> {
  return (await readGuardedFile(path, kind)).toString('utf8');
}

export function readGuardedFileSync(path: string, kind: FileKind): Buffer {
  const rule = FILE_RULES[kind];
  let fd: number | undefined;
  try {
    checkStats(rule.followLinks ? statSync(path) : lstatSync(path), path, rule);
    fd = openSync(path, openFlags(rule));
    const opened = fstatSync(fd);
    checkStats(opened, path, rule);
    const chunks = new ChunkedRead(path, rule, opened.size);
    for (let target = chunks.next(); target !== null; target = chunks.next()) {
      chunks.advance(readSync(fd, target.buffer, target.offset, target.length, null));
    }
    return chunks.result();
  } catch (error) {
    throw asReadError(error, path, rule);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function readGuardedTextSync(path: string, kind: FileKind): string {
  return readGuardedFileSync(path, kind).toString('utf8');
}

/** The first `bytes` bytes of a file of this kind (fewer when it is shorter), e.g. an .onnx header. */
export function readGuardedHeadSync(path: string, kind: FileKind, bytes: number): Buffer {
  const rule = FILE_RULES[kind];
  let fd: number | undefined;
  try {
    checkStats(rule.followLinks ? statSync(path) : lstatSync(path), path, rule);
    fd = openSync(path, openFlags(rule));
    checkStats(fstatSync(fd), path, rule);
    const head = Buffer.alloc(bytes);
    return head.subarray(0, readSync(fd, head, 0, bytes, 0));
  } catch (error) {
    throw asReadError(error, path, rule);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Opens a file of this kind for positioned reads (an .onnx header read piece by piece), with the same
 * checks as a whole read: the caller reads what it needs and closes the handle.
 */
export async function openGuardedFile(path: string, kind: FileKind): Promise<{ handle: FileHandle; size: number }> {
  const rule = FILE_RULES[kind];
  let handle: FileHandle | undefined;
  try {
    checkStats(rule.followLinks ? await stat(path) : await lstat(path), path, rule);
    handle = await open(path, openFlags(rule));
    const opened = await handle.stat();
    checkStats(opened, path, rule);
    return { handle, size: opened.size };
  } catch (error) {
    await handle?.close().catch(() => undefined);
    throw asReadError(error, path, rule);
  }
}

/** Checks without reading that the path is a file kvscope would read as this kind (e.g. before a runtime opens it). */
export async function checkReadableFile(path: string, kind: FileKind): Promise<void> {
  const rule = FILE_RULES[kind];
  try {
    checkStats(rule.followLinks ? await stat(path) : await lstat(path), path, rule);
  } catch (error) {
    throw asReadError(error, path, rule);
  }
}

export function checkReadableFileSync(path: string, kind: FileKind): void {
  const rule = FILE_RULES[kind];
  try {
    checkStats(rule.followLinks ? statSync(path) : lstatSync(path), path, rule);
  } catch (error) {
    throw asReadError(error, path, rule);
  }
}

// O_NONBLOCK makes an open of a FIFO return at once (one swapped in after the stat); Windows has neither flag.
function openFlags(rule: FileRule): number {
  return constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (rule.followLinks ? 0 : (constants.O_NOFOLLOW ?? 0));
}

function checkStats(stats: Stats, path: string, rule: FileRule): void {
  if (stats.isSymbolicLink()) {
    throw new GuardedFileError(`${path} is a symbolic link; kvscope reads ${rule.label} only from a file it wrote itself, not through a link.`, 'link', rule.fix);
  }
  if (!stats.isFile()) {
    throw new GuardedFileError(`${path} is ${kindOfEntry(stats)}, not a regular file: kvscope reads ${rule.label} only from a regular file.`, 'not-regular',
      stats.isDirectory() ? 'Point kvscope at the file inside the folder, or at the model folder itself.' : 'Copy the content into a regular file and point kvscope at that.');
  }
  if (rule.maxBytes !== null && stats.size > rule.maxBytes) throw tooLarge(path, rule, stats.size);
}

function kindOfEntry(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}

function tooLarge(path: string, rule: FileRule, bytes: number | null): GuardedFileError {
  const size = bytes === null ? 'more' : formatBytes(bytes);
  return new GuardedFileError(`${path} is too large for ${rule.label}: ${size}, more than the ${formatBytes(rule.maxBytes ?? 0)} kvscope reads.`, 'too-large', rule.fix);
}

function asReadError(error: unknown, path: string, rule?: FileRule): Error {
  if (error instanceof FileAccessError) return error;
  if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
    // Where links are followed (model folders), ELOOP is a loop of links, not a refused link.
    if (rule?.followLinks === true) {
      return new GuardedFileError(`${path} is a symbolic link that leads back to itself (a loop of links), so there is no file to read.`, 'link',
        'Replace the link with the file, or point it at the file it was meant for.');
    }
    return new GuardedFileError(`${path} is a symbolic link; kvscope reads it only from a file it wrote itself, not through a link.`, 'link', '');
  }
  return new FileAccessError(describeFsError(error, path, 'read'));
}

/**
 * Reads into one buffer sized from the file's size (+1 byte to see a file that grew), growing it
 * when the file is longer than it said, and refusing once the cap is passed.
 */
class ChunkedRead {
  private buffer: Buffer;
  private filled = 0;
  private ended = false;

  constructor(private readonly path: string, private readonly rule: FileRule, claimedBytes: number) {
    const cap = rule.maxBytes ?? Number.MAX_SAFE_INTEGER;
    this.buffer = Buffer.allocUnsafe(Math.min(cap, Math.max(claimedBytes, 64 * 1024)) + 1);
  }

  next(): { buffer: Buffer; offset: number; length: number } | null {
    if (this.ended) return null;
    if (this.filled === this.buffer.length) {
      const cap = this.rule.maxBytes ?? Number.MAX_SAFE_INTEGER;
      if (this.filled > cap) throw tooLarge(this.path, this.rule, null);
      const grown = Buffer.allocUnsafe(Math.min(cap + 1, this.buffer.length * 2));
      this.buffer.copy(grown, 0, 0, this.filled);
      this.buffer = grown;
    }
    return { buffer: this.buffer, offset: this.filled, length: this.buffer.length - this.filled };
  }

  advance(bytesRead: number): void {
    if (bytesRead === 0) this.ended = true;
    this.filled += bytesRead;
  }

  result(): Buffer {
    if (this.rule.maxBytes !== null && this.filled > this.rule.maxBytes) throw tooLarge(this.path, this.rule, null);
    return this.buffer.subarray(0, this.filled);
  }
}
