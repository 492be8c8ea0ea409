import { KvscopeError } from '../errors.js';

/** A file kvscope cannot read or write; the message names the path and the likely fix. */
export class FileAccessError extends KvscopeError {
  override readonly name: string = 'FileAccessError';
}

/** One sentence for a failed fs call, from its errno code. */
export function describeFsError(error: unknown, path: string, verb: 'read' | 'write' | 'delete'): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT': return verb === 'write' ? `Cannot write ${path}: its folder does not exist. Create it first.` : `${path} does not exist. Check the path.`;
    case 'EISDIR': return `${path} is a folder, not a file.`;
    case 'EACCES':
    case 'EPERM': return `Permission denied: cannot ${verb} ${path}.`;
    case 'ENOSPC': return `Cannot write ${path}: the disk is full.`;
    default: return `Cannot ${verb} ${path}: ${(error as Error | undefined)?.message ?? String(error)}`;
  }
}
