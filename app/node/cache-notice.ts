/**
 * Where a cache says, in one line, that it found an entry damaged or stale and rebuilt it: the
 * process's stderr (the CLI's, or the server's log; a run's record carries it as a diagnostic where
 * the caller has one). The line names the cache folder, never the user's model: a damaged cache
 * entry is kvscope's to repair.
 */
export function reportCacheRebuild(line: string): void {
  process.stderr.write(`kvscope: ${line}\n`);
}
