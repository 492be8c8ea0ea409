import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { FilePrefix } from '../../cli/io.js';
import type { FileKind } from './file-kinds.js';
import { readGuardedHeadSync } from './guarded-read.js';

const HASH_CHUNK = 1 << 20;

/**
 * The first `maxBytes` bytes of a file of this kind (with the guarded reader's checks: no FIFO, no
 * device, the kind's size cap), its size, and the sha256 of the whole file, streamed a MiB at a time
 * and never held: an evaluation that needs the start of a long text reads that start, while the
 * text's identity (the reference key, the record) stays the whole file's.
 */
export function readFilePrefixSync(path: string, maxBytes: number, kind: FileKind): FilePrefix {
  const bytes = readGuardedHeadSync(path, kind, maxBytes);
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const hash = createHash('sha256');
    const buffer = Buffer.alloc(Math.min(HASH_CHUNK, Math.max(1, size)));
    for (let offset = 0; offset < size;) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, size - offset), offset);
      if (read === 0) break;
      hash.update(buffer.subarray(0, read));
      offset += read;
    }
    return { bytes, size, sha256: hash.digest('hex') };
  } finally {
    closeSync(fd);
  }
}
