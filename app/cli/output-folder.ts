import { UsageError, type CliIo } from './io.js';

/** Fail before a long run, not after it: the output file's folder must exist. */
export function checkOutputFolder(io: CliIo, out: string): void {
  const cut = Math.max(out.lastIndexOf('/'), out.lastIndexOf('\\'));
  const folder = cut < 0 ? '.' : cut === 0 ? out.slice(0, 1) : out.slice(0, cut);
  if (!io.isDirectory(folder)) throw new UsageError(`--out ${out}: the folder ${folder} does not exist. Create it first.`);
}
