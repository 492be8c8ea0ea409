import { KvscopeError } from '../errors.js';

/** A file kvscope cannot read or write; the message names the path and the likely fix. */
export class FileAccessError extends KvscopeError {
  override readonly name: string = 'FileAccessError';
}

/**
 * A file kvscope writes (a record, a cache entry) that could not be written: a full disk, a quota, a
 * read-only or failing disk, no permission. Its own name, so that a run reports it as
 * `storage-failed` (app/protocol/run-error.ts) and a sweep stops instead of recording the point as
 * failed: an I/O failure is never a result.
 */
export class StorageWriteError extends FileAccessError {
  override readonly name: string = 'StorageWriteError';
  constructor(message: string, readonly errno: string | undefined) {
    super(message);
  }
}

/** One sentence for a failed fs call, from its errno code. */
export function describeFsError(error: unknown, path: string, verb: 'read' | 'write' | 'delete' | 'create'): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT': return verb === 'write' ? `Cannot write ${path}: its folder does not exist. Create it first.` : `${path} does not exist. Check the path.`;
    case 'EISDIR': return `${path} is a folder, not a file.`;
    case 'EACCES':
    case 'EPERM': return `Permission denied: cannot ${verb} ${path}.`;
    case 'ENOSPC': return `Cannot write ${path}: the disk is full.`;
    case 'EROFS': return `Cannot ${verb} ${path}: it is on a read-only file system. Choose a writable folder.`;
    case 'EEXIST': return `Cannot ${verb} ${path}: a file of that name is in the way. Choose another name, or move the file.`;
    case 'ENOTDIR': return `Cannot ${verb} ${path}: a part of the path is a file, not a folder. Check the path.`;
    case 'ELOOP': return `Cannot ${verb} ${path}: its path runs through a loop of symbolic links. Remove the link that points back.`;
    default: return `Cannot ${verb} ${path}: ${(error as Error | undefined)?.message ?? String(error)}`;
  }
}
