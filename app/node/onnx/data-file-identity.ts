import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

/** A source data file as a cache entry that reads it in place remembers it. */
export interface DataFileIdentity {
  /** relative to the source graph's folder, as the graph's `location` names it */
  readonly location: string;
  readonly bytes: number;
  readonly mtimeMs: number;
  /** sha256 of SAMPLE_BYTES at the start, the middle and the end (SAMPLES_NOTE) */
  readonly sampledSha256: string;
}

const SAMPLE_BYTES = 64 * 1024;

/*
 * SAMPLES_NOTE: why a sample and not the whole file. The rewrite cache holds no weights: the
 * rewritten graph reads the source's data file where it is, at the offsets and lengths the source
 * graph records (and the cache key hashes the source graph whole). What the entry depends on is
 * that this is still the file the layout was read for: its size, modification time and three
 * samples catch a replaced, re-exported, truncated or regrown file at ~200 KB read per run. A full
 * hash would read the whole weights on every run (about 1 s per GB here) to guard bytes the entry
 * does not hold: damage inside the user's own weights changes the host path and the graph path alike,
 * and is the source's to check, not the cache's.
 */
export async function dataFileIdentity(dir: string, location: string): Promise<DataFileIdentity> {
  const handle = await open(join(dir, location), 'r');
  try {
    const { size, mtimeMs } = await handle.stat();
    const hash = createHash('sha256');
    const buffer = Buffer.alloc(SAMPLE_BYTES);
    for (const start of [0, Math.max(0, Math.floor(size / 2) - SAMPLE_BYTES / 2), Math.max(0, size - SAMPLE_BYTES)]) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(SAMPLE_BYTES, size), start);
      hash.update(buffer.subarray(0, bytesRead));
    }
    return { location, bytes: size, mtimeMs, sampledSha256: hash.digest('hex') };
  } finally {
    await handle.close();
  }
}

export function sameIdentity(a: DataFileIdentity, b: DataFileIdentity): boolean {
  return a.location === b.location && a.bytes === b.bytes && a.mtimeMs === b.mtimeMs && a.sampledSha256 === b.sampledSha256;
}
