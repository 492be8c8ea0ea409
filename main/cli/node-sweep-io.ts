import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import type { SweepIo } from '../../app/cli/sweep-io.js';
import { nodeCliIo } from './node-io.js';

/** The sweep's window on the file system: the CLI's plus folder operations. */
export function nodeSweepIo(): SweepIo {
  return {
    ...nodeCliIo(),
    exists: (path) => existsSync(path),
    listDirectory: (path) => (existsSync(path) ? readdirSync(path) : []),
    makeDirectory: (path) => void mkdirSync(path, { recursive: true }),
    rename: (from, to) => renameSync(from, to),
    remove: (path) => rmSync(path, { recursive: true, force: true }),
    copyDirectory: (from, to) => cpSync(from, to, { recursive: true }),
  };
}
