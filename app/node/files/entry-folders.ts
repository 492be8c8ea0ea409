import { readdirSync } from 'node:fs';

/**
 * The names of the folders directly in a cache folder `dir`, one per entry (a dot folder is a write in
 * progress or the cache's own, not an entry); none where `dir` does not exist or cannot be read.
 */
export function entryFolders(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((dirent) => dirent.isDirectory() && !dirent.name.startsWith('.')).map((dirent) => dirent.name);
  } catch {
    return [];
  }
}
