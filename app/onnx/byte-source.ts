/**
 * Random access to the bytes of a file without holding the file: the protobuf header reader walks a
 * multi-GB `.onnx` this way and never reads a weight. The Node adapter is app/node/onnx/file-byte-source.ts;
 * tests and small graphs use `bytesSource`.
 */
export interface ByteSource {
  /** total length in bytes */
  readonly size: number;
  /** `length` bytes from `offset` (fewer only where the source ends); the caller may keep the result */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** A source over bytes already in memory (views, no copy). */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    read: async (offset, length) => bytes.subarray(offset, Math.min(bytes.length, offset + length)),
  };
}
