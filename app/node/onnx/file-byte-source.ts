import type { FileHandle } from 'node:fs/promises';
import type { ByteSource } from '../../onnx/byte-source.js';
import { openGuardedFile } from '../files/guarded-read.js';

/** A ByteSource over an open file: positioned reads, so nothing but what is asked for is read. */
export class FileByteSource implements ByteSource {
  private constructor(readonly path: string, private readonly handle: FileHandle, readonly size: number) {}

  /** Opens `path` read-only; the caller closes it (`close`, or `withFileByteSource`). */
  static async open(path: string): Promise<FileByteSource> {
    // The guarded reader's checks (app/node/files): a FIFO or device in place of a graph is refused
    // before it is opened, where a plain open would hold a thread of the pool until a writer came.
    const { handle, size } = await openGuardedFile(path, 'onnx');
    return new FileByteSource(path, handle, size);
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    const wanted = Math.max(0, Math.min(length, this.size - offset));
    const buffer = new Uint8Array(wanted);
    let filled = 0;
    while (filled < wanted) {
      const { bytesRead } = await this.handle.read(buffer, filled, wanted - filled, offset + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled === wanted ? buffer : buffer.subarray(0, filled);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

/** Runs `use` with the file open and closes it afterwards, whatever happens. */
export async function withFileByteSource<T>(path: string, use: (source: FileByteSource) => Promise<T>): Promise<T> {
  const source = await FileByteSource.open(path);
  try {
    return await use(source);
  } finally {
    await source.close();
  }
}
