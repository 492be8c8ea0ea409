import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';

const cache = new Map<string, { readonly size: number; readonly mtimeMs: number; readonly digest: string }>();

/**
 * sha256 of a file, hex, streamed (a graph can be gigabytes). Cached per path while size and mtime
 * stay the same, so repeated runs on one model do not re-read it.
 */
export async function sha256File(path: string): Promise<string> {
  const { size, mtimeMs } = statSync(path);
  const cached = cache.get(path);
  if (cached !== undefined && cached.size === size && cached.mtimeMs === mtimeMs) return cached.digest;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 22 })) hash.update(chunk as Buffer);
  const digest = hash.digest('hex');
  cache.set(path, { size, mtimeMs, digest });
  return digest;
}

export function sha256Text(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}
